"""``easyr1 train``: check a recipe in the driver, then hand over to EasyR1's own ``verl.trainer.main``.

Everything a user can get wrong is found before Ray starts and raised as a
:class:`~zoomzero_plugin.errors.ZoomzeroError` (the CLI prints it as one line, a problem list as a list):
a missing recipe (:class:`UsageError`), EasyR1 or vLLM missing (:class:`DependencyError`), the plugins
(:class:`PluginError`), and every problem with the recipe, its files and first rows at once (:class:`ConfigError`).
A dry run needs no vLLM: EasyR1's modules are imported with :mod:`.vllm_stub` standing in for it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Sequence

from omegaconf import OmegaConf

from zoomzero_plugin.cpu_compat import VLLM_ENV_INSTALL
from zoomzero_plugin.shipped import find_recipe

from . import cpu_mode, vllm_stub
from .activation import CHECKED_ENV, ENV_HOOK, activate, export_job_env
from .checks import check_config, unsupported_model
from .errors import ConfigError, DependencyError, UsageError, ZoomzeroError, format_problems
from .metrics_file import METRICS_FILE_ENV
from .recipe import check_files, check_rows as check_first_rows, load_recipe
from .registry import PluginHost

EASYR1_INSTALL = (
    "install EasyR1 (a clone of github.com/hiyouga/EasyR1: `pip install -e .`; or PyPI `lazyllm-verl`, EasyR1 v0.3.2; "
    "never PyPI `verl`, another project)"
)


def resolve_recipe(recipe: str) -> tuple[str, str | None]:
    """(file to read, note): a missing ``yamls/NAME.yaml`` falls back to the recipe of that name shipped with the
    package, and the note says so. Raises :class:`UsageError` when neither exists."""
    if os.path.isfile(recipe):
        return recipe, None
    if os.path.exists(recipe):
        raise UsageError(f"recipe {recipe} is not a file")
    shipped = find_recipe(recipe)
    if shipped is None:
        raise UsageError(
            f"recipe {recipe} not found (`zoomzero recipes` lists the recipes shipped with zoomzero-plugin)"
        )
    return str(shipped.path), (
        f"{recipe} is not in {os.getcwd()}: using the recipe shipped with zoomzero-plugin, {shipped.path} "
        f"(to edit a copy: zoomzero recipes copy {shipped.name})"
    )


def require_easyr1() -> None:
    """Raise :class:`DependencyError` unless EasyR1 (the package ``verl``) is installed."""
    if importlib.util.find_spec("verl") is None:
        raise DependencyError(f"EasyR1 is not installed (no module 'verl'): {EASYR1_INSTALL}")


def import_easyr1_config() -> None:
    """Import EasyR1's config classes (they import vLLM; under :func:`.vllm_stub.stand_in` a stand-in serves it)."""
    try:
        import verl.trainer.config  # noqa: F401
    except ImportError as e:
        raise DependencyError(
            f"EasyR1's config classes cannot be imported here ({type(e).__name__}: {e}); `easyr1 doctor` lists "
            "the versions found"
        ) from None


def _print_settings(host: PluginHost, config, recipe: str, overrides: Sequence[str], problems: Sequence[str]) -> None:
    """The effective settings. A plugin that cannot say which rollout a recipe with ``problems`` enables leaves it
    to the problem list printed after this (an error it raises without problems is one)."""
    import verl

    print(
        f"EasyR1 {verl.__version__} · recipe {recipe}" + (f" · overrides: {' '.join(overrides)}" if overrides else "")
    )
    print("Plugins:")
    for info in host.infos:
        print(f"  {info.name:<12} {info.target}  ({info.distribution})")
    print(
        f"Advantage estimator: {config.algorithm.adv_estimator}"
        + (" (plugin)" if host.estimator(config.algorithm.adv_estimator) else " (EasyR1)")
    )
    print(f"Reward function: {config.worker.reward.reward_function}:{config.worker.reward.reward_function_name}")
    try:
        selected = host.rollout_for(config)
    except (ValueError, ZoomzeroError) as e:
        if not problems:
            raise ConfigError(f"the plugins cannot choose the recipe's rollout: {e}") from None
        print("Rollout: not shown (see the problems below)")
    else:
        name = f"{selected[0].name} (plugin: {selected[0].summary})" if selected else "EasyR1's vLLMRollout"
        print(f"Rollout: {name}")
    for plugin, sections in host.describe(config).items():
        for section, values in sections.items():
            print(f"  [{plugin}] {section}: {json.dumps(values, default=str)}")


def check(recipe: str, overrides: Sequence[str], dry_run: bool, check_rows: int) -> tuple:
    """Build and check the recipe; returns (host, recipe Recipe). Raises a ZoomzeroError for any user problem."""
    host = activate("easyr1 train (driver)")
    import_easyr1_config()
    built = load_recipe(recipe, overrides)
    refusal = unsupported_model(built.config)
    if refusal:  # nothing else matters until EasyR1 can train the model
        raise ConfigError(refusal)
    problems = check_config(built.config, host)
    file_problems, file_notes = check_files(built.config, built.raw, host)
    problems, notes = problems + file_problems, built.notes + file_notes
    if check_rows > 0 and not problems:
        row_problems, row_notes = check_first_rows(built.config, check_rows, host)
        problems, notes = problems + row_problems, notes + row_notes
    if dry_run:
        _print_settings(host, built.config, recipe, overrides, problems)
    if not problems:
        job_env = host.job_env(built.config)
        if dry_run:
            notes += [f"{k}={os.environ.get(k, v)} in every process of the job" for k, v in job_env.items()]
        else:
            notes += export_job_env(job_env)
    for note in notes:
        print(f"note: {note}")
    if problems:
        raise ConfigError(format_problems(problems, f" {recipe}"))
    return host, built


def train(
    recipe: str,
    overrides: Sequence[str],
    dry_run: bool = False,
    check_rows: int = 4,
    cpu: bool = False,
    metrics_file: str | None = None,
) -> int:
    """``easyr1 train``: 0 after a valid dry run or a finished training; raises a ZoomzeroError otherwise.

    ``cpu``: CPU mode (:mod:`.cpu_mode`); ``metrics_file``: every logged step as a JSON line (:mod:`.metrics_file`).
    """
    bad = [o for o in overrides if "=" not in o]
    if bad:
        raise UsageError(f"overrides must be key=value, got {' '.join(bad)}")
    path, note = resolve_recipe(recipe)
    if note:
        print(f"note: {note}")
    require_easyr1()
    vllm_missing = not vllm_stub.real_vllm_importable()
    if vllm_missing and not dry_run:
        how = (
            f"--cpu trains on vLLM's CPU build: {VLLM_ENV_INSTALL}"
            if cpu or cpu_mode.requested()
            else "install vLLM as its docs say for your CUDA (on a machine without a GPU, --cpu trains in the vLLM "
            "environment of `bash scripts/install-cpu.sh --vllm`)"
        )
        raise DependencyError(
            "vLLM is not installed: EasyR1 generates with it, so training cannot start in this environment; "
            f"{how}. `easyr1 train RECIPE --dry-run` checks a recipe without it"
        )
    if vllm_missing:
        print(
            "note: vLLM is not installed here: EasyR1's modules are imported with a stand-in for it "
            "(a dry run generates nothing; training needs vLLM)"
        )
    with vllm_stub.stand_in():
        _, built = check(path, overrides, dry_run, check_rows)
    extra = _cpu_overrides(built.config, dry_run) if cpu or cpu_mode.requested() else []
    if dry_run:
        print("dry run: the recipe is valid; no Ray cluster was started and no GPU was used")
        return 0
    if metrics_file:
        os.environ[METRICS_FILE_ENV] = os.path.abspath(metrics_file)
        export_job_env({METRICS_FILE_ENV: os.environ[METRICS_FILE_ENV]})
    if built.adapted:  # EasyR1 would reject the file as written: give it the adapted recipe instead
        path, overrides = _save_adapted(OmegaConf.merge(built.raw, OmegaConf.from_dotlist(extra)), path), []
    else:
        overrides = [*overrides, *extra]
    return _run_easyr1(path, overrides)


def _cpu_overrides(config, dry_run: bool) -> list[str]:
    """CPU mode in the driver: refuse what has no CPU form, print each switched setting; unless a dry run, declare
    the recipe's GPUs to the local Ray and mark every process of the job for CPU mode (the workers install the CPU
    seams; the driver runs no EasyR1 worker code and needs none). Returns the switches as EasyR1 overrides."""
    problems = cpu_mode.refusals(config.worker, config.trainer.nnodes)
    if problems:
        raise ConfigError(format_problems(problems, " for --cpu"))
    switched = cpu_mode.switches(config.worker)
    for switch in switched:
        print(switch.line())
    if not dry_run:
        for note in cpu_mode.prepare_driver(config) + export_job_env(cpu_mode.job_env()):
            print(f"note: {note}")
    return [switch.override() for switch in switched]


def _save_adapted(raw, recipe: str) -> str:
    """Write the adapted recipe EasyR1 is given instead of ``recipe``. As JSON (which YAML reads): EasyR1's
    ``verl.utils.py_functional`` registers a YAML float representer that rounds a float not printed in scientific
    notation to 3 decimals, so ``OmegaConf.save`` would write a learning rate of 2e-4 as 0.0."""
    path = os.path.join(tempfile.mkdtemp(prefix="easyr1-recipe-"), os.path.basename(recipe))
    with open(path, "w", encoding="utf-8") as out:
        json.dump(OmegaConf.to_container(raw, resolve=False), out, indent=2)
    print(f"note: EasyR1 runs the adapted recipe {path}")
    return path


def _run_easyr1(recipe: str, overrides: Sequence[str]) -> int:
    current = os.environ.get("RAY_RUNTIME_ENV_HOOK")
    if current not in (None, "", ENV_HOOK):
        raise UsageError(f"RAY_RUNTIME_ENV_HOOK is already set to {current}; unset it or chain {ENV_HOOK}")
    os.environ["RAY_RUNTIME_ENV_HOOK"] = ENV_HOOK  # EasyR1's own ray.init() then adds the worker setup hook
    os.environ[CHECKED_ENV] = "1"
    from verl.trainer import main as easyr1_main

    sys.argv = ["verl.trainer.main", f"config={recipe}", *overrides]
    easyr1_main.main()
    return 0
