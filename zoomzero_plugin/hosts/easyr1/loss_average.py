"""``worker.actor.loss_avg_mode: seq`` as EasyR1 documents it: each response's token mean, then the mean over
the responses of the mini-batch (Zoom-Zero Eq. 2; what the authors' released config computes).

EasyR1 (v0.3.2 and main) averages each micro-batch by the mode, then rescales that micro-batch's loss by its
share of the mini-batch's *tokens* (``loss * sum(response_mask) * world_size / total_response_tokens``). In
``seq`` mode a micro-batch of one response therefore weighs its mean by its length: the result is the token
mean over the mini-batch, the same as ``token`` mode. The wrapper below hands ``update_policy`` each response's
mask divided by its length (weights summing to 1 per response): EasyR1's own arithmetic then gives

    loss = (1 / N) · Σ_i (1 / |o_i|) · Σ_t ℓ_{i,t}        (N responses of the mini-batch, on every rank)

for the policy loss and the KL loss alike. Shapes: ``response_mask`` (bs, response_length), 0/1 or weights.
Only ``seq`` mode is touched; ``token`` mode is EasyR1's unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def per_response_weights(response_mask: torch.Tensor) -> torch.Tensor:
    """(bs, L) float32: ``response_mask / |o_i|`` (each response's tokens sum to 1; an empty response stays 0)."""
    mask = response_mask.to(torch.float32)
    return mask / mask.sum(-1, keepdim=True).clamp(min=1.0)


def wrap_update_policy(original: Callable) -> Callable:
    def update_policy(self: Any, data: Any) -> Any:
        if getattr(self.config, "loss_avg_mode", "token") != "seq" or "response_mask" not in data.batch.keys():
            return original(self, data)
        batch, mask = data.batch, data.batch["response_mask"]
        locked = batch.is_locked  # a batch that came through Ray's dispatch to a worker is locked
        if locked:
            batch.unlock_()
        batch["response_mask"] = per_response_weights(mask)
        try:
            return original(self, data)
        finally:
            batch["response_mask"] = mask
            if locked:
                batch.lock_()

    return update_policy
