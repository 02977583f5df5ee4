"""Named reward functions: ``worker.reward.reward_function: zoomzero:gvqa`` → the installed file's path.

EasyR1 only accepts an existing file path and silently drops anything else (``RewardConfig.post_init``
prints "not found" and sets it to None). Where the plugins are active when the config is built (the
``easyr1`` launcher, ``--dry-run``), the post_init seam resolves the name first. Under
``python3 -m verl.trainer.main`` the driver builds the config before Ray (and so the plugins) start: the
runtime-env hook then re-reads the recipe, and passes the raw name in ``EASYR1_PLUGINS_REWARD_FUNCTION`` to
every worker, where :func:`apply_fixup` restores it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .state import current_host

FIXUP_ENV = "EASYR1_PLUGINS_REWARD_FUNCTION"


def resolve(name: str) -> tuple[str, str] | None:
    """(absolute file path, function name) of a plugin reward name, or None if no plugin adds ``name``."""
    value = current_host().reward_functions.get(name)
    if value is None:
        return None
    path, _, function = value.rpartition(":")
    return path, function


def wrap_post_init(original: Callable) -> Callable:
    def post_init(self) -> None:
        if isinstance(self.reward_function, str) and (resolved := resolve(self.reward_function)):
            self.reward_function = ":".join(resolved)
        original(self)

    return post_init


def easyr1_function_name(raw: str) -> str:
    """The function name EasyR1's post_init keeps for a raw ``reward_function`` value."""
    return raw.rsplit(":", maxsplit=1)[1] if ":" in raw else "main"


def apply_fixup(reward_config: Any) -> None:
    """Restore a plugin reward name that a driver without plugins dropped (see the module docstring)."""
    raw = os.environ.get(FIXUP_ENV)
    if not raw or reward_config.reward_function is not None:
        return
    if reward_config.reward_function_name != easyr1_function_name(raw):
        return
    resolved = resolve(raw)
    if resolved is None:
        raise ValueError(f"worker.reward.reward_function '{raw}': no installed easyr1 plugin adds this name")
    reward_config.reward_function, reward_config.reward_function_name = resolved
