"""The sampler check: does vLLM sample from the policy the actor trains?

After each step's old log-probs, a batch that carries the sampler's own log-prob of every sampled token
(``rollout_log_probs``: EasyR1's rollout in CPU mode, the VideoZoomer rollout with ``sampling_logprobs``) is
compared with the actor's (``old_log_probs``) over the response tokens the policy sampled. Both come from the
same weights when the weight sync works, so the gap is float noise (fp32 on a CPU: ~1e-6); stale weights in vLLM,
a dtype mismatch or different positions show as a large gap. Logged as ``rollout/logprob_gap_max`` and
``rollout/logprob_gap_mean``; only at temperature 1, where vLLM's reported log-probs are the policy's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .multiturn import SAMPLED_LOG_PROBS


def logprob_gap(batch: Any) -> dict[str, float]:
    """``{"rollout/logprob_gap_max", "rollout/logprob_gap_mean"}`` for a batch with both log-probs, else ``{}``.

    ``rollout_log_probs``, ``old_log_probs``, ``response_mask``: (bs, response_length).
    """
    tensors = batch.batch
    keys = set(tensors.keys())  # a TensorDict refuses `in`
    if SAMPLED_LOG_PROBS not in keys or "old_log_probs" not in keys:
        return {}
    if float(batch.meta_info.get("temperature", 1.0)) != 1.0:
        return {}
    sampled = tensors["response_mask"].bool()
    if not bool(sampled.any()):
        return {}
    gap = (tensors[SAMPLED_LOG_PROBS].float() - tensors["old_log_probs"].float()).abs()[sampled]
    return {"rollout/logprob_gap_max": float(gap.max()), "rollout/logprob_gap_mean": float(gap.mean())}


def wrap_compute_data_metrics(original: Callable) -> Callable:
    def compute_data_metrics(batch, *args, **kwargs):
        return {**original(batch, *args, **kwargs), **logprob_gap(batch)}

    return compute_data_metrics
