"""This package's step metrics, read back from TransferQueue after verl's ``_compute_old_log_prob``.

verl's v1 trainer logs neither the reward manager's components nor an agent loop's ``extra_fields``; the EasyR1 host
logs both (``reward/*``, ``zoom/*``, ``agent/*``). :func:`extras_metrics` gives the same means here. And the sampler
check, by media: how far vLLM's log-prob of each sampled token is from the actor's, per kind of input.

verl logs the largest gap over a whole batch (``training/rollout_probs_diff_max``). A batch of this package's loops
mixes trajectories that show videos (Zoom-Zero's coarse pass), images only (a VideoZoomer trajectory without a clip, or
clips as images) and images with clips as videos; a clip whose timing differs between vLLM and the trainer shows only
in the trajectories that hold one. After verl's own ``_compute_old_log_prob`` the seam reads the same fields back
from TransferQueue and logs ``zoomzero/logprob_gap_max/<media>`` per kind (the agent loops name it in
``extra_fields["media"]``): float noise (~1e-5 in fp32) when both sides see the same weights and positions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

MEDIA = "media"  # extra_fields: what a trajectory shows the model ("video", "images", "images+video")
PREFIX = "zoomzero/logprob_gap_max/"


def gaps_by_media(
    old: torch.Tensor, rollout: torch.Tensor, mask: torch.Tensor, media: Sequence[Any]
) -> dict[str, float]:
    """The largest |actor − sampler| log-prob over the sampled tokens of each media kind.

    Args:
        old, rollout: (bs, L) log-probs of the actor and of vLLM; mask: (bs, L) 1 on sampled tokens.
        media: (bs,) each trajectory's kind (None: not one of this package's loops: only in ``all``).
    """
    gap = ((old.float() - rollout.float()).abs() * mask.float()).amax(-1)
    out: dict[str, float] = {PREFIX + "all": float(gap.max()) if gap.numel() else 0.0}
    for i, kind in enumerate(media):
        if kind is not None:
            out[PREFIX + str(kind)] = max(out.get(PREFIX + str(kind), 0.0), float(gap[i]))
    return out


AGENT_STATS = ("turns", "calls", "errors", "clip_frames", "truncated")  # the VideoZoomer loop's extra fields
REWARD_INFO = "reward_extra_info"


def extras_metrics(extras: Sequence[Any]) -> dict[str, float]:
    """Means over a batch's trajectories: ``reward/<component>`` (the reward manager's), ``zoom/<stat>`` (the zoom
    pass's ``zoom_*`` fields; ``zoom/answered`` the share with a letter) and ``agent/<stat>``; non-numbers skipped."""
    sums: dict[str, list[float]] = {}

    def add(key: str, value: Any) -> None:
        if isinstance(value, (bool, int, float)) and value == value:
            sums.setdefault(key, []).append(float(value))

    for extra in extras:
        extra = extra or {}
        for name, value in (extra.get(REWARD_INFO) or {}).items():
            add(f"reward/{name}", value)
        for name, value in extra.items():
            if name.startswith("zoom_") and name != "zoom_answer":
                add(f"zoom/{name[5:]}", value)
            elif name in AGENT_STATS:
                add(f"agent/{name}", value)
        if "zoom_answer" in extra:
            add("zoom/answered", extra["zoom_answer"] is not None)
    return {k: sum(v) / len(v) for k, v in sums.items()}


def wrap_compute_old_log_prob(original: Callable) -> Callable:
    def _compute_old_log_prob(self, batch, metrics):
        out = original(self, batch, metrics)
        import transfer_queue as tq

        sampled = bool(self.config.actor_rollout_ref.rollout.get("calculate_log_probs", False))
        fields = ["extra_fields"] + (["old_log_probs", "rollout_log_probs", "response_mask"] if sampled else [])
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        extras = list(data["extra_fields"])
        metrics.update(extras_metrics(extras))
        if not sampled:
            return out
        media = [(e or {}).get(MEDIA) for e in extras]
        p = data.select("old_log_probs", "rollout_log_probs", "response_mask").to_padded_tensor()
        metrics.update(gaps_by_media(p["old_log_probs"], p["rollout_log_probs"], p["response_mask"], media))
        return out

    return _compute_old_log_prob
