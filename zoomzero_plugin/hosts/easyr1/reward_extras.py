"""Per-response extra inputs for reward functions, and the reward-manager side of the host.

A rollout hook stores extras in ``batch.non_tensor_batch["reward_extras"]`` (one dict per response);
the wrapped reward manager merges each dict into that response's reward input, next to EasyR1's
``response``, ``response_length`` and ``ground_truth``. The manager then reports that it did, so the
host can stop a run whose reward actors lack the plugins instead of scoring without the extras.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from .reward_names import apply_fixup
from .state import current_host

EXTRAS_KEY = "reward_extras"
DELIVERED = "__easyr1_reward_extras_delivered__"  # metrics key; popped by the host, never logged
_EASYR1_INPUT_KEYS = ("response", "response_length", "ground_truth")


def add_reward_extras(batch: Any, **fields: Sequence[Any]) -> None:
    """Add per-response fields (each a sequence of len(batch)) to the reward inputs of ``batch``."""
    n = len(batch)
    clash = set(fields) & set(_EASYR1_INPUT_KEYS)
    if clash:
        raise ValueError(f"reward extras may not replace EasyR1's own inputs {sorted(clash)}")
    for name, values in fields.items():
        if len(values) != n:
            raise ValueError(f"reward extra '{name}' has {len(values)} values for {n} responses")
    current = batch.non_tensor_batch.get(EXTRAS_KEY)
    extras = np.empty(n, dtype=object)
    for i in range(n):
        extras[i] = {**(current[i] if current is not None else {}), **{k: v[i] for k, v in fields.items()}}
    batch.non_tensor_batch[EXTRAS_KEY] = extras


class _WithExtras:
    """A reward function that sees each response's extras merged into its input.

    Batch functions get the whole list at once; sequential functions are called once per response, in
    batch order (as both EasyR1 versions do).
    """

    def __init__(self, fn: Callable, extras: Sequence[dict]):
        self.fn, self.extras, self.calls = fn, list(extras), 0

    def __call__(self, inputs):
        if isinstance(inputs, list):
            if len(inputs) != len(self.extras):
                raise RuntimeError(f"{len(inputs)} reward inputs for {len(self.extras)} extras")
            return self.fn([{**x, **e} for x, e in zip(inputs, self.extras)])
        merged = {**inputs, **self.extras[self.calls]}
        self.calls += 1
        return self.fn(merged)


def wrap_compute_reward(original: Callable) -> Callable:
    def compute_reward(self, data):
        extras = data.non_tensor_batch.get(EXTRAS_KEY)
        if extras is None:
            return original(self, data)
        fn = self.reward_fn
        self.reward_fn = _WithExtras(fn, extras)
        try:
            reward_tensor, reward_metrics = original(self, data)
        finally:
            self.reward_fn = fn
        reward_metrics[DELIVERED] = [1.0]
        return reward_tensor, reward_metrics

    return compute_reward


def wrap_manager_init(original: Callable) -> Callable:
    def __init__(self, config, tokenizer, *args, **kwargs):
        apply_fixup(config)
        original(self, config, tokenizer, *args, **kwargs)
        self.reward_fn = _without_foreign_options(self.reward_fn)

    return __init__


def _without_foreign_options(reward_fn: Any) -> Any:
    """Drop plugin option sections (``zoom``, ``tokenadv``…) the reward function does not declare."""
    if not isinstance(reward_fn, partial):
        return reward_fn
    try:
        params = inspect.signature(reward_fn.func).parameters
    except (TypeError, ValueError):
        return reward_fn
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return reward_fn
    owned = current_host().option_keys()
    keep = {k: v for k, v in reward_fn.keywords.items() if k in params or k not in owned}
    if len(keep) == len(reward_fn.keywords):
        return reward_fn
    return partial(reward_fn.func, *reward_fn.args, **keep)
