"""Config checks that need no data: the host's own, then every plugin's ``easyr1_check_config``.

Run by ``easyr1 train`` (and ``--dry-run``) in the driver, by the runtime-env hook under
``python3 -m verl.trainer.main``, and again in the trainer (the ``Runner`` actor) before workers start.
"""

from __future__ import annotations

import ast
import os
from functools import lru_cache
from typing import Any

from ...errors import ModelError
from ...hub import CACHE, locate
from .registry import PluginHost


def builtin_estimators() -> list[str]:
    from verl.trainer.core_algos import AdvantageEstimator

    return [e.value for e in AdvantageEstimator]


def declared_reward_type(path: str) -> str | None:
    """The module constant ``REWARD_TYPE = "…"`` of a reward file, read without running it."""
    try:
        tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "REWARD_TYPE" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return None


def function_parameters(path: str, name: str) -> tuple[set[str], bool] | None:
    """(parameter names, has **kwargs) of a module-level ``def name`` in a file, read without running it."""
    try:
        tree = ast.parse(open(path, encoding="utf-8").read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            args = node.args
            names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
            return names, args.kwarg is not None
    return None


def _reward_problems(reward: Any, option_keys: set[str]) -> list[str]:
    if reward.reward_function is None:
        return [
            "worker.reward.reward_function is unset or names a file that does not exist (EasyR1 drops it and "
            "fails later with 'Reward function is not provided')"
        ]
    if not os.path.isfile(reward.reward_function):
        return [f"worker.reward.reward_function: file {reward.reward_function} does not exist"]
    problems = []
    file = os.path.basename(reward.reward_function)
    declared = declared_reward_type(reward.reward_function)
    configured = getattr(reward, "reward_type", None)  # EasyR1 0.3.2 only; main reads REWARD_TYPE itself
    if declared and configured and declared != configured:
        problems.append(f"worker.reward.reward_type is '{configured}' but {file} declares REWARD_TYPE = '{declared}'")
    signature = function_parameters(reward.reward_function, reward.reward_function_name)
    if signature is None:
        problems.append(f"worker.reward.reward_function: {file} defines no function '{reward.reward_function_name}'")
    elif not signature[1]:
        unknown = sorted(set(reward.reward_function_kwargs or {}) - signature[0] - option_keys)
        if unknown:
            problems.append(
                f"worker.reward.reward_function_kwargs {unknown}: not parameters of "
                f"{file}:{reward.reward_function_name}"
            )
    return problems


def easyr1_version() -> str:
    """The installed EasyR1's ``verl.__version__``."""
    import verl

    return getattr(verl, "__version__", "unknown")


# Model types an older EasyR1 does not patch, and the EasyR1 that does (its verl/models/monkey_patch.py).
NEEDS_NEWER_EASYR1 = {
    "qwen3_vl": "EasyR1 main (0.3.3.dev0 or later: pip install git+https://github.com/hiyouga/EasyR1)",
    "qwen3_vl_moe": "EasyR1 main (0.3.3.dev0 or later: pip install git+https://github.com/hiyouga/EasyR1)",
}


HUB_TIMEOUT = 5.0  # seconds the check waits for the Hub's answer about a model id that is not cached here


@lru_cache(maxsize=16)
def model_source(model_path: str) -> tuple[str | None, str]:
    """``(where, why)``: where the recipe's model loads from (``folder``, ``cache``, ``hub``: :func:`~zoomzero_plugin.
    hub.locate`) and ``""``, or None and why it cannot be loaded here — at once, never the Hub client's retries."""
    try:
        return locate(model_path, HUB_TIMEOUT), ""
    except ModelError as e:
        return None, str(e)


@lru_cache(maxsize=16)
def model_type(model_path: str, trust_remote_code: bool = False) -> str | None:
    """The ``model_type`` of a model folder or hub id, from its own config (a hub id from the local cache, else
    downloaded); None when the config cannot be read (:func:`model_source` says why; EasyR1's loader reports it)."""
    where, _ = model_source(model_path)
    if where is None:
        return None
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(
            model_path, trust_remote_code=trust_remote_code, local_files_only=where == CACHE
        )
        return str(config.model_type)
    except Exception:  # noqa: BLE001 - unreadable here: EasyR1 reports it when it loads the model
        return None


def unsupported_model(config: Any) -> str | None:
    """One line when the installed EasyR1 cannot train the recipe's model (its workers would stop deep inside with
    "Model architecture … is not supported yet"), naming the EasyR1 that can; None otherwise."""
    from verl.models.monkey_patch import SUPPORTED_MODEL_TYPE

    model = config.worker.actor.model
    kind = model_type(str(model.model_path), bool(model.trust_remote_code))
    if kind is None or kind in SUPPORTED_MODEL_TYPE:
        return None
    needs = NEEDS_NEWER_EASYR1.get(kind, "an EasyR1 whose verl/models/monkey_patch.py lists it")
    return (
        f"worker.actor.model.model_path {model.model_path} is a {kind} model, which the installed EasyR1 "
        f"{easyr1_version()} cannot train; it needs {needs}"
    )


def check_config(config: Any, host: PluginHost) -> list[str]:
    """Every problem found with a built ``PPOConfig`` (empty when it can train), the plugins' included."""
    problems: list[str] = [p for p in [unsupported_model(config)] if p]
    name = str(getattr(config.algorithm.adv_estimator, "value", config.algorithm.adv_estimator))
    builtins = builtin_estimators()
    estimator = host.estimator(name)
    if estimator is None and name not in builtins:
        problems.append(
            f"algorithm.adv_estimator '{name}' is unknown: EasyR1 has {builtins}, the installed plugins add "
            f"{sorted(host.estimators) or 'none'}"
        )
    if estimator is not None and estimator.validate_as in ("grpo", "rloo") and config.worker.rollout.n < 2:
        problems.append(
            f"algorithm.adv_estimator '{name}' normalises rewards within groups of responses to one prompt: "
            f"worker.rollout.n must be >= 2 (got {config.worker.rollout.n})"
        )
    data = config.data
    if data.min_pixels is not None and data.max_pixels is not None and data.min_pixels > data.max_pixels:
        problems.append(
            f"data.min_pixels={data.min_pixels} > data.max_pixels={data.max_pixels} (qwen-vl-utils rejects it)"
        )
    problems += _reward_problems(config.worker.reward, host.option_keys())
    problems += host.check_config(config)
    return problems
