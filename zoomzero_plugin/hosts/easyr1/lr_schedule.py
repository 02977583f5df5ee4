"""A constant learning rate from the first step, as recipes without warmup ask (EasyR1 0.3.2's quirk, fixed in main).

EasyR1 0.3.2's ``get_constant_schedule_with_warmup`` returns ``min(1, step / max(1, warmup))``: with no warmup steps
the first optimizer step gets a learning rate of 0 (and AdamW's weight decay with it), so step 1 of every run
trains nothing. EasyR1 main returns 1 once the warmup is over. The wrapper calls EasyR1's function and, when it was
asked for no warmup, makes every step's factor 1 — main's behaviour; with warmup steps it changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _constant(step: int) -> float:
    return 1.0


def wrap_constant_schedule(original: Callable) -> Callable:
    def get_constant_schedule_with_warmup(optimizer: Any, num_warmup_steps: int, *args: Any, **kwargs: Any) -> Any:
        scheduler = original(optimizer, num_warmup_steps, *args, **kwargs)
        if num_warmup_steps <= 0:
            scheduler.lr_lambdas = [_constant] * len(scheduler.lr_lambdas)
            for group, base in zip(optimizer.param_groups, scheduler.base_lrs):  # step 0's rates, recomputed
                group["lr"] = base
            scheduler._last_lr = list(scheduler.base_lrs)  # what get_last_lr() reports (EasyR1 logs actor/lr)
        return scheduler

    return get_constant_schedule_with_warmup
