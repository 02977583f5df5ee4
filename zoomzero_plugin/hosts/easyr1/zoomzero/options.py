"""The plugin's options of an EasyR1 recipe: its sections live in ``worker.reward.reward_function_kwargs`` (EasyR1
rejects new top-level keys), read into the options both hosts share (:mod:`zoomzero_plugin.hosts.options`), once per
recipe; and this plugin's reward files, by which a recipe's reward function is known to be one of them."""

from __future__ import annotations

import json
import os
from typing import Any

from zoomzero_plugin.agent import videozoomer_reward
from zoomzero_plugin.gvqa import gvqa_reward

from ...options import GVQA, VIDEOZOOMER, RecipeOptions, read_options


def reward_targets() -> dict[str, str]:
    """This plugin's reward names and the files they name (``path:compute_score``, as EasyR1 loads them)."""
    return {
        GVQA: f"{os.path.realpath(gvqa_reward.__file__)}:compute_score",
        VIDEOZOOMER: f"{os.path.realpath(videozoomer_reward.__file__)}:compute_score",
    }


def reward_name(config: Any) -> str | None:
    """Which of this plugin's rewards the recipe's reward function is (by the file it names), else None."""
    reward = config.worker.reward
    if not reward.reward_function:
        return None
    target = f"{os.path.realpath(reward.reward_function)}:{reward.reward_function_name}"
    return next((name for name, named in reward_targets().items() if named == target), None)


_READ: dict[str, RecipeOptions] = {}


def recipe_options(config: Any) -> RecipeOptions:
    """The plugin's options of an EasyR1 ``PPOConfig``, read once per recipe (the same sections: the same object)."""
    name, kwargs = reward_name(config), config.worker.reward.reward_function_kwargs or {}
    key = json.dumps([name, kwargs], sort_keys=True, default=repr)
    if key not in _READ:
        if len(_READ) > 16:
            _READ.clear()
        _READ[key] = read_options(name, kwargs)
    return _READ[key]
