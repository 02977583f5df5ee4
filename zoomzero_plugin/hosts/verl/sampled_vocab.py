"""The actor's log-probs over the vocabulary vLLM samples from (the seam ``fsdp.prepare_model_outputs``).

verl's vLLM server never samples the vision placeholder tokens (``<|image_pad|>``, ``<|video_pad|>``: the ids of verl's
``get_vision_placeholder_token_ids``, which would break the pairing of placeholders with images) nor the vocabulary's
padding rows (ids at or past ``len(tokenizer)``): its ``monkey_patch_compute_logits`` sets their logits to -inf. verl's
actor computes log-probs and entropy over the whole vocabulary, so for every sampled token the two differ by
``log(1 − p)``, ``p`` the mass the actor puts on those tokens (vLLM's log-prob always the higher): ~1e-4 on a
warm-started tiny model, 1.8e-3 after one update, ~0.03 on a random one. And the policy gradient is taken on another
distribution than the one sampled.

The wrapper of verl's ``FSDPEngineWithLMHead.prepare_model_outputs`` sets those logits far below the smallest
(``min − 1e4``: finite, so verl's entropy, ``Σ p·logit``, stays a number; ``exp`` of it is 0 in any float type), in
place (a copy would cost another vocabulary-sized tensor per token; a model whose last op keeps its output for the
backward pass, a logit soft-cap, would stop there with autograd's in-place error), then calls verl's own: log-probs,
entropy and their gradients are those of the distribution vLLM samples from. Only for vision models (the model
config has a ``vision_config``); a text-only model's outputs are untouched. It refuses, in one line naming the option
to change, where the mask cannot apply: fused kernels (``use_fused_kernels``: the log-probs come without logits) and a
vision model whose processor names no placeholder token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from zoomzero_plugin.errors import ConfigError

BELOW = 1e4  # how far below the smallest logit the unsampled tokens go (exp(-1e4) is 0 in every float type)
FUSED = "actor_rollout_ref.model.use_fused_kernels"
FUSED_PROBLEM = (
    f"{FUSED}=true: verl's fused kernels give the actor's log-probs without logits, so they cannot leave out the "
    f"vision placeholder tokens verl's vLLM server never samples (zoomzero-plugin's seam fsdp.prepare_model_outputs); "
    f"set {FUSED}=false"
)


def unsampled_ids(placeholders: Sequence[int], sampled_size: int, vocab_rows: int) -> list[int]:
    """The vocabulary rows vLLM never samples: the placeholder ids and the padding rows ``sampled_size..vocab_rows-1``
    (verl's server passes ``len(tokenizer)`` as the sampled size), sorted, each once."""
    return sorted({int(i) for i in placeholders if 0 <= int(i) < vocab_rows} | set(range(sampled_size, vocab_rows)))


def mask_unsampled(logits: torch.Tensor, ids: Sequence[int]) -> torch.Tensor:
    """Set ``logits[..., ids]`` to ``min(logits) − BELOW``, in place; returns ``logits``.

    Args:
        logits: (..., V) the model's logits (a tensor autograd tracks is fine: the masked entries get no gradient).
        ids: rows of the last dimension to mask (:func:`unsampled_ids`).
    """
    if not ids:
        return logits
    index = torch.tensor(list(ids), dtype=torch.long, device=logits.device)
    fill = logits.detach().amin() - BELOW
    return logits.index_fill_(-1, index, fill)


def vision_model(model_config: Any) -> bool:
    """Whether verl's model config is a vision model's (verl's own test: the HF config has a ``vision_config``)."""
    return hasattr(getattr(model_config, "hf_config", None), "vision_config")


def sampled_vocabulary(engine: Any, micro_batch: Any) -> tuple[list[int], int | None]:
    """(the placeholder ids, ``len(tokenizer)``) of ``engine``'s model, read from the same model config verl's vLLM
    server reads them from; a :class:`~zoomzero_plugin.errors.ConfigError` where the mask cannot apply."""
    from verl.utils import tensordict_utils as tu
    from verl.workers.rollout.utils import get_vision_placeholder_token_ids

    config = engine.model_config
    if tu.get_non_tensor_data(data=micro_batch, key="use_fused_kernels", default=False):
        raise ConfigError(FUSED_PROBLEM)
    placeholders = get_vision_placeholder_token_ids(config.processor)
    if not placeholders:
        raise ConfigError(
            f"{getattr(config, 'path', 'the model')} is a vision model but its processor names no image or video "
            "token (verl's get_vision_placeholder_token_ids is empty): the actor cannot leave out the tokens verl's "
            "vLLM server never samples; set actor_rollout_ref.model.tokenizer_path to the folder of the model's "
            "processor (preprocessor_config.json)"
        )
    return placeholders, (len(config.tokenizer) if config.tokenizer is not None else None)


def wrap_prepare_model_outputs(original: Callable) -> Callable:
    def prepare_model_outputs(self, output, output_args, micro_batch, logits_processor_func):
        if vision_model(self.model_config):
            placeholders, sampled = sampled_vocabulary(self, micro_batch)
            logits = output.logits
            if hasattr(logits, "full_tensor"):  # a DTensor (vocabulary-parallel): verl gathers it first too
                logits = logits.full_tensor()
            rows = logits.shape[-1]
            output.logits = mask_unsampled(
                logits, unsampled_ids(placeholders, rows if sampled is None else sampled, rows)
            )
        return original(self, output, output_args, micro_batch, logits_processor_func)

    return prepare_model_outputs
