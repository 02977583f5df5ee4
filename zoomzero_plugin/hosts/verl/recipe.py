"""A verl recipe: found, composed with Hydra as ``python -m verl.trainer.main_ppo`` composes it, and checked.

A recipe is a Hydra config in verl's style: ``defaults: [ppo_trainer, _self_]`` with verl's config folder on the search
path (``hydra.searchpath: [pkg://verl.trainer.config]``), then only the keys it changes. :func:`compose` gives the
same ``DictConfig`` verl's entry point builds; :func:`problems` checks it with verl's own config classes (every section
verl turns into a dataclass, and ``verl.utils.config.validate_config``, the check ``main_ppo`` runs first) plus the
files it names, and returns one line per problem instead of stopping at the first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zoomzero_plugin.errors import UsageError
from zoomzero_plugin.shipped import folder

from .options import recipe_options
from .sampled_vocab import FUSED, FUSED_PROBLEM
from .tokenadv import ESTIMATORS

# The sections verl builds dataclasses from as they stand (omega_conf_to_dataclass), checked one by one.
DATACLASS_SECTIONS = (
    "actor_rollout_ref.actor",
    "actor_rollout_ref.rollout",
    "actor_rollout_ref.rollout.checkpoint_engine",
    "actor_rollout_ref.model",
    "algorithm",
)


def find(recipe: str) -> Path:
    """The recipe file: the path given, else a recipe of that name shipped with the package (``yamls/verl``)."""
    path = Path(recipe)
    if path.is_file():
        return path.resolve()
    shipped = folder("yamls")
    candidate = shipped / "verl" / path.name if shipped is not None else None
    if candidate is not None and candidate.is_file():
        return candidate
    raise UsageError(f"recipe {recipe}: no such file (and no shipped verl recipe named {path.name})")


def compose(recipe: Path, overrides: Sequence[str] = ()) -> Any:
    """The recipe with ``overrides`` as verl's Hydra entry point composes it (a ``DictConfig``, unresolved)."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(recipe.parent), version_base=None):
            return hydra_compose(config_name=recipe.stem, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"recipe {recipe.name}: {first}") from None


def loggers(config: Any) -> list[str]:
    """The recipe's ``trainer.logger`` as a list (verl takes one name or a list)."""
    value = _select(config, "trainer.logger")
    return [value] if isinstance(value, str) else [str(v) for v in (value or [])]


def _files(config: Any) -> list[str]:
    problems = []
    for key in ("data.train_files", "data.val_files"):
        value = _select(config, key)
        for path in [value] if isinstance(value, str) else list(value or []):
            if path and "://" not in str(path) and not Path(os.path.expanduser(str(path))).exists():
                problems.append(f"{key}: {path} does not exist")
    model = _select(config, "actor_rollout_ref.model.path")
    if model and Path(os.path.expanduser(str(model))).anchor and not Path(os.path.expanduser(str(model))).exists():
        problems.append(f"actor_rollout_ref.model.path: {model} does not exist (a hub id is fine; a path must exist)")
    return problems


def _select(config: Any, key: str) -> Any:
    from omegaconf import OmegaConf

    try:
        return OmegaConf.select(config, key, throw_on_missing=False)
    except Exception:  # noqa: BLE001 - an unresolvable value reads as absent here; the checks below report it
        return None


def _local(path: Any) -> bool:
    return bool(path) and Path(os.path.expanduser(str(path))).exists()


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:400] if text else type(e).__name__


def verl_problems(config: Any) -> list[str]:
    """What verl's own config classes and ``validate_config`` say about ``config`` (one line each)."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    config = OmegaConf.create(OmegaConf.to_container(config, resolve=False))
    problems = []
    try:
        OmegaConf.resolve(config)
    except Exception as e:  # noqa: BLE001 - reported as a problem of the recipe
        return [f"the recipe does not resolve: {_one_line(e)}"]
    for key in DATACLASS_SECTIONS:
        if key == "actor_rollout_ref.model" and not _local(OmegaConf.select(config, "actor_rollout_ref.model.path")):
            continue  # a hub id: its files are checked when the run downloads them, not here
        try:
            omega_conf_to_dataclass(OmegaConf.select(config, key))
        except Exception as e:  # noqa: BLE001 - each section's own error, reported
            problems.append(f"{key}: {_one_line(e)} (verl's config class)")
    if not problems:
        try:
            validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
        except Exception as e:  # noqa: BLE001 - verl's validate_config raises assertions and ValueErrors
            problems.append(f"verl's validate_config: {_one_line(e)}")
    return problems


PLUGIN_NAMES = {
    "actor_rollout_ref.rollout.agent.default_agent_loop": ("zoomzero", "videozoomer"),
    "reward.reward_manager.name": ("zoomzero", "videozoomer"),
}


def plugin_problems(config: Any) -> list[str]:
    """What the ``zoomzero`` section says wrong (its option classes' own messages), and how it fits the recipe."""
    options = recipe_options(config)
    out = list(options.problems)
    loop = _select(config, "actor_rollout_ref.rollout.agent.default_agent_loop")
    manager = _select(config, "reward.reward_manager.name")
    uses = (
        loop in PLUGIN_NAMES["actor_rollout_ref.rollout.agent.default_agent_loop"]
        or manager in PLUGIN_NAMES["reward.reward_manager.name"]
    )
    if uses and loop != manager:
        out.append(
            f"actor_rollout_ref.rollout.agent.default_agent_loop is {loop} but reward.reward_manager.name is "
            f"{manager}: the zoomzero loop goes with the zoomzero reward manager, videozoomer with videozoomer"
        )
    if str(_select(config, "algorithm.adv_estimator")) in ESTIMATORS and manager not in ("zoomzero", "videozoomer"):
        out.append(
            "algorithm.adv_estimator tokenadv/grpo_sum reads the reward components of the zoomzero or "
            "videozoomer reward manager (reward.reward_manager.name)"
        )
    if uses and _select(config, FUSED) is True:
        out.append(FUSED_PROBLEM)
    if options.zoom_pass and loop == "videozoomer":
        out.append("zoomzero.zoom enables the zoom pass, which is the zoomzero loop's, not videozoomer's")
    return out


def problems(config: Any, check_files: bool = True) -> list[str]:
    """Every problem of a composed recipe: its files, this package's section, then verl's own checks."""
    return (_files(config) if check_files else []) + plugin_problems(config) + verl_problems(config)
