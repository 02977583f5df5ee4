"""Fresh, reproducible sampling noise at every training step.

EasyR1 copies ``worker.rollout.seed`` into vLLM's ``SamplingParams``, so every request of every step is sampled with
the same seed: every step draws the same random numbers (and every prompt of a step the same ones), and what varies
from step to step is only the policy. While ``_make_batch_data`` runs, the host gives each generation the seed
``worker.rollout.seed + STRIDE * step + k`` (``k``: the step's k-th generation; online filtering generates more than
once): a run stays reproducible, a resumed step repeats the step it resumes, and each step draws new numbers.
Validation (greedy) and the zoom pass (greedy) are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STRIDE = 1000  # generations per step before two steps' seeds could meet
SEED_KEY = "seed"  # meta_info key: vLLMRollout.update_sampling_params sets it on SamplingParams


class SeededWorkerGroup:
    """``actor_rollout_ref_wg`` during one training step's batch: each ``generate_sequences`` gets the next seed."""

    def __init__(self, real: Any, first_seed: int):
        self.real, self.next_seed = real, first_seed

    def generate_sequences(self, prompts: Any) -> Any:
        prompts.meta_info = {**prompts.meta_info, SEED_KEY: self.next_seed}
        self.next_seed += 1
        output = self.real.generate_sequences(prompts)
        output.meta_info.pop(SEED_KEY, None)
        return output

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def step_seed(base: int, step: int) -> int:
    return int(base) + STRIDE * int(step)


@contextmanager
def stepped(trainer: Any) -> Iterator[None]:
    """Seed ``trainer``'s generations of the current step (``trainer.global_step``) for the ``with`` block; nothing
    changes when the recipe's rollout has no seed."""
    base = getattr(trainer.config.worker.rollout, "seed", None)
    if base is None or isinstance(trainer.actor_rollout_ref_wg, SeededWorkerGroup):
        yield
        return
    real = trainer.actor_rollout_ref_wg
    trainer.actor_rollout_ref_wg = SeededWorkerGroup(real, step_seed(base, getattr(trainer, "global_step", 0)))
    try:
        yield
    finally:
        trainer.actor_rollout_ref_wg = real
