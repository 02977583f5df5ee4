"""``easyr1 train``: check a recipe in the driver, then hand over to EasyR1's own ``verl.trainer.main``."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Sequence

from omegaconf import OmegaConf

from .activation import CHECKED_ENV, ENV_HOOK, activate, export_job_env
from .checks import check_config
from .errors import ConfigError, PluginError, format_problems
from .recipe import check_files, check_rows as check_first_rows, load_recipe


def _easyr1_importable() -> str | None:
    """None, or why EasyR1's config classes cannot be imported here."""
    try:
        import verl.trainer.config  # noqa: F401 - imports vLLM through verl.workers.rollout
    except ImportError as e:
        return (
            f"cannot import EasyR1's config classes ({e}). EasyR1 imports vLLM even to build its config: run "
            "`easyr1` where EasyR1 itself runs (`easyr1 doctor` lists what is missing)"
        )
    return None


def _print_settings(host, config, recipe: str, overrides: Sequence[str]) -> None:
    import verl

    print(f"EasyR1 {verl.__version__} · recipe {recipe}" + (f" · overrides: {' '.join(overrides)}" if overrides else ""))
    print("Plugins:")
    for info in host.infos:
        print(f"  {info.name:<12} {info.target}  ({info.distribution})")
    print(f"Advantage estimator: {config.algorithm.adv_estimator}"
          + (" (plugin)" if host.estimator(config.algorithm.adv_estimator) else " (EasyR1)"))
    print(f"Reward function: {config.worker.reward.reward_function}:{config.worker.reward.reward_function_name}")
    selected = host.rollout_for(config)
    print(f"Rollout: {selected[0].name} (plugin: {selected[0].summary})" if selected else "Rollout: EasyR1's vLLMRollout")
    for plugin, sections in host.describe(config).items():
        for section, values in sections.items():
            print(f"  [{plugin}] {section}: {json.dumps(values, default=str)}")


def train(recipe: str, overrides: Sequence[str], dry_run: bool = False, check_rows: int = 4) -> int:
    bad = [o for o in overrides if "=" not in o]
    if bad:
        print(f"easyr1 train: overrides must be key=value, got {bad}", file=sys.stderr)
        return 2
    if not os.path.isfile(recipe):
        print(f"easyr1 train: recipe {recipe} not found", file=sys.stderr)
        return 2
    try:
        host = activate("easyr1 train (driver)")
    except PluginError as e:
        print(f"easyr1 train: {e}", file=sys.stderr)
        return 1
    why = _easyr1_importable()
    if why:
        print(f"easyr1 train: {why}", file=sys.stderr)
        return 1
    try:
        config, raw, notes, adapted = load_recipe(recipe, overrides)
    except ConfigError as e:
        print(f"easyr1 train: {e}", file=sys.stderr)
        return 1
    problems = check_config(config)
    file_problems, file_notes = check_files(config, raw)
    problems, notes = problems + file_problems, notes + file_notes
    if check_rows > 0 and not problems:
        row_problems, row_notes = check_first_rows(config, check_rows)
        problems, notes = problems + row_problems, notes + row_notes
    if dry_run:
        _print_settings(host, config, recipe, overrides)
    if not problems:
        job_env = host.job_env(config)
        if dry_run:
            notes += [f"{k}={os.environ.get(k, v)} in every process of the job" for k, v in job_env.items()]
        else:
            notes += export_job_env(job_env)
    for note in notes:
        print(f"note: {note}")
    if problems:
        print(format_problems(problems, f" {recipe}"), file=sys.stderr)
        return 1
    if dry_run:
        print("dry run: the recipe is valid; no Ray cluster was started and no GPU was used")
        return 0
    if adapted:  # EasyR1 would reject the file as written: give it the adapted recipe instead
        recipe, overrides = _save_adapted(raw, recipe), []
    return _run_easyr1(recipe, overrides)


def _save_adapted(raw, recipe: str) -> str:
    path = os.path.join(tempfile.mkdtemp(prefix="easyr1-recipe-"), os.path.basename(recipe))
    OmegaConf.save(raw, path)
    print(f"note: EasyR1 runs the adapted recipe {path}")
    return path


def _run_easyr1(recipe: str, overrides: Sequence[str]) -> int:
    current = os.environ.get("RAY_RUNTIME_ENV_HOOK")
    if current not in (None, "", ENV_HOOK):
        print(f"easyr1 train: RAY_RUNTIME_ENV_HOOK is already set to {current}; unset it or chain {ENV_HOOK}", file=sys.stderr)
        return 1
    os.environ["RAY_RUNTIME_ENV_HOOK"] = ENV_HOOK  # EasyR1's own ray.init() then adds the worker setup hook
    os.environ[CHECKED_ENV] = "1"
    from verl.trainer import main as easyr1_main

    sys.argv = ["verl.trainer.main", f"config={recipe}", *overrides]
    easyr1_main.main()
    return 0
