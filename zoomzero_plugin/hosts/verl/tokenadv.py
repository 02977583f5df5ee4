"""TokenAdv (Zoom-Zero Eq. 4–5) and its fair baseline ``grpo_sum`` as verl advantage estimators.

verl's estimator interface (``register_adv_est``) hands an estimator ``token_level_rewards``, ``response_mask``, the
group ``index`` and the algorithm config: not the response's token ids (which tokens are grounding tokens) nor the
reward's components (TokenAdv normalises each one within its group, then averages them: no token-level reward encodes
that). So the route is the trainer's: a seam on the trainer's ``_compute_advantage`` (:data:`~.seams.SEAMS`), run
for these two estimators only, fetches each trajectory's ``responses``, ``response_mask`` and ``extra_fields`` (the
reward manager's components, :mod:`.reward`) from TransferQueue, computes the grounding-token masks with the
tokenizer's own decoding (:class:`~zoomzero_plugin.token_masks.TokenMasker`: ``<glue>…</glue>``, or with
``tokenadv.over_turns`` the ``<video_zoom>`` calls of a multi-turn trajectory) and hands them to the registered
estimator through a context variable, then calls verl's own ``_compute_advantage``: verl's KL-in-reward, rollout
correction, nesting and write-back stay verl's, and the estimator computes the core's
:func:`~zoomzero_plugin.gvqa.advantages.token_adv` — the function the EasyR1 host calls.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from zoomzero_plugin.agent.protocol import turn_call_ranges
from zoomzero_plugin.gvqa.advantages import grpo_advantage, token_adv
from zoomzero_plugin.gvqa.parsing import glue_char_ranges
from zoomzero_plugin.token_masks import TokenMasker

from .options import recipe_options

TOKENADV, GRPO_SUM = "tokenadv", "grpo_sum"
ESTIMATORS = (TOKENADV, GRPO_SUM)
REWARD_INFO = "reward_extra_info"  # extra_fields key under which verl keeps the reward manager's components


@dataclass(frozen=True)
class Inputs:
    """What the estimator cannot get from verl, row for row in the order verl computes advantages."""

    components: dict[str, torch.Tensor]  # name -> (bs,) float
    grounding: torch.Tensor  # (bs, L) bool: the tokens that learn from the grounding components
    eps: float
    std: str
    glue_components: tuple[str, ...]
    answer_components: tuple[str, ...]


_INPUTS: contextvars.ContextVar[Inputs | None] = contextvars.ContextVar("zoomzero_tokenadv_inputs", default=None)


@lru_cache(maxsize=4)
def masker(tokenizer: Any, over_turns: bool) -> TokenMasker:
    return TokenMasker(tokenizer, turn_call_ranges if over_turns else glue_char_ranges)


def components_of(extras: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
    """Each reward component (every key the reward manager returned but ``overall``) as a (bs,) tensor."""
    infos = [dict((e or {}).get(REWARD_INFO) or {}) for e in extras]
    if not infos or not all(infos):
        raise RuntimeError(
            "tokenadv needs each trajectory's reward components (reward_extra_info): use the zoomzero or videozoomer "
            "reward manager (reward.reward_manager.name) and verl's reward loop (reward.num_workers >= 1)"
        )
    names = [k for k in infos[0] if k != "overall"]
    return {k: torch.tensor([float(i[k]) for i in infos], dtype=torch.float32) for k in names}


def inputs_for(
    config: Any, tokenizer: Any, responses: torch.Tensor, response_mask: torch.Tensor, extras: Sequence[Any]
) -> Inputs:
    """The estimator's inputs for one batch: components, grounding-token masks and the options."""
    options = recipe_options(config).checked().tokenadv
    grounding = masker(tokenizer, options.over_turns)(responses, response_mask)
    return Inputs(
        components=components_of(extras),
        grounding=grounding,
        eps=options.eps,
        std=options.std,
        glue_components=tuple(options.glue_components),
        answer_components=tuple(options.answer_components),
    )


@contextmanager
def supplying(inputs: Inputs):
    """Within the block, the registered estimators read ``inputs`` (what verl's interface does not pass them)."""
    token = _INPUTS.set(inputs)
    try:
        yield inputs
    finally:
        _INPUTS.reset(token)


def _current(name: str, response_mask: torch.Tensor) -> Inputs:
    inputs = _INPUTS.get()
    if inputs is None:
        raise RuntimeError(
            f"algorithm.adv_estimator={name} needs the zoomzero plugin in the trainer's process (its seam on "
            "PPOTrainer._compute_advantage supplies the reward components and grounding tokens); is zoomzero-plugin "
            "installed where verl runs? (`zoomzero verl doctor`)"
        )
    if tuple(inputs.grounding.shape) != tuple(response_mask.shape):
        raise RuntimeError(
            f"{name}: grounding masks {tuple(inputs.grounding.shape)} for responses "
            f"{tuple(response_mask.shape)} (the batch changed between fetch and advantage)"
        )
    return inputs


def compute_tokenadv(token_level_rewards, response_mask, index=None, config=None, **kwargs):
    """verl estimator ``tokenadv``: (advantages, returns), (bs, L) float32, 0 on padding."""
    inputs = _current(TOKENADV, response_mask)
    try:
        return token_adv(
            inputs.components,
            inputs.grounding.to(response_mask.device),
            response_mask,
            index,
            eps=inputs.eps,
            glue_components=inputs.glue_components,
            answer_components=inputs.answer_components,
            std=inputs.std,
        )
    except ValueError as e:
        raise ValueError(
            f"tokenadv: {e}; choose the groups with zoomzero.tokenadv.glue_components / answer_components"
        ) from None


def compute_grpo_sum(token_level_rewards, response_mask, index=None, config=None, **kwargs):
    """verl estimator ``grpo_sum``: GRPO on the summed reward with tokenadv's eps and std."""
    inputs = _current(GRPO_SUM, response_mask)
    return grpo_advantage(token_level_rewards.sum(-1), response_mask, index, inputs.eps, inputs.std)


def register_estimators(core_algos: Any) -> None:
    """Register both estimators with verl's ``register_adv_est`` (idempotent)."""
    for name, fn in ((TOKENADV, compute_tokenadv), (GRPO_SUM, compute_grpo_sum)):
        if core_algos.ADV_ESTIMATOR_REGISTRY.get(name) is not fn:
            core_algos.register_adv_est(name)(fn)


def wrap_compute_advantage(original: Callable) -> Callable:
    """The trainer's ``_compute_advantage(batch, metrics)``: for tokenadv and grpo_sum, first fetch what the
    estimator needs (see the module docstring), then verl's own."""

    def _compute_advantage(self, batch, metrics):
        if str(self.config.algorithm.adv_estimator) not in ESTIMATORS:
            return original(self, batch, metrics)
        import transfer_queue as tq

        fields = ["responses", "response_mask", "extra_fields"]
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        extras = list(data["extra_fields"])
        padded = data.select("responses", "response_mask").to_padded_tensor()
        inputs = inputs_for(self.config, self.tokenizer, padded["responses"], padded["response_mask"], extras)
        share = float(inputs.grounding.sum()) / max(float(padded["response_mask"].sum()), 1.0)
        metrics[f"{TOKENADV}/grounding_token_share"] = share
        with supplying(inputs):
            return original(self, batch, metrics)

    return _compute_advantage
