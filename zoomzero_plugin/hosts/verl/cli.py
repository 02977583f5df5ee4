"""Train with verl 0.9: check a verl recipe, then run verl's own ``python -m verl.trainer.main_ppo`` on it.

zoomzero-plugin is a verl plugin (entry point group ``verl.plugins``): verl loads it in every process by itself, so
``python -m verl.trainer.main_ppo --config-path yamls/verl --config-name zoomzero`` trains with it too. This command
adds what a launch should have before anything expensive starts: the recipe composed as verl composes it and checked
with verl's own config classes (every problem listed, not only the first), and ``--cpu``: the whole loop on CPU
processes (verl's platform registry gets a CPU platform; the CUDA-only settings are switched, one printed line each;
a local Ray declares what the run needs, so it cannot wait forever for a CPU it will never get).

  zoomzero verl train yamls/verl/zoomzero.yaml --cpu trainer.total_training_steps=2
  zoomzero verl train yamls/verl/videozoomer.yaml --dry-run
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from zoomzero_plugin.errors import ConfigError, format_problems

from . import cpu_mode

ENTRY = "verl.trainer.main_ppo"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="a verl recipe (Hydra YAML; the shipped ones are yamls/verl/*.yaml)")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="Hydra overrides, as main_ppo takes them")
    parser.add_argument("--dry-run", action="store_true", help="compose and check the recipe, print it, then exit")
    parser.add_argument(
        "--metrics-file",
        metavar="PATH",
        help="also write every logged step's metrics to PATH, one JSON line per step (verl's file logger)",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="the whole loop on CPU processes (gloo FSDP2, vLLM's CPU build; the recipe's CUDA-only settings switched, "
        "one line each): try a recipe on a tiny model before paying for GPUs (docs/verl.md)",
    )


def launch_command(recipe, overrides: list[str]) -> list[str]:
    """verl's own entry point on the recipe, with ``overrides`` (the user's, then CPU mode's)."""
    return [sys.executable, "-m", ENTRY, "--config-path", str(recipe.parent), "--config-name", recipe.stem, *overrides]


def run(args: argparse.Namespace) -> int:
    from . import recipe as recipes  # the recipe check loads torch: `zoomzero --help` stays quick

    path = recipes.find(args.recipe)
    overrides = list(args.overrides)
    config = recipes.compose(path, overrides)
    env = dict(os.environ)
    if args.cpu:
        refused = cpu_mode.refusals(config) + cpu_mode.lacking(config, os.environ.get(cpu_mode.RESOURCES_ENV))
        if refused:
            raise ConfigError("; ".join(refused))
        switches = cpu_mode.switches(config)
        for switch in switches:
            print(switch.line())
        overrides += [s.override(cpu_mode.HYDRA_SET) for s in switches]
        config = recipes.compose(path, overrides)
        job = cpu_mode.job_env(config)
        print(f"cpu mode: Ray declares {job[cpu_mode.RESOURCES_ENV]} ({cpu_mode.RESOURCES_ENV})")
        env.update(job)
    if args.metrics_file:
        loggers = list(recipes.loggers(config))
        overrides.append(f"trainer.logger=[{','.join(dict.fromkeys([*loggers, 'file']))}]")
        env["VERL_FILE_LOGGER_PATH"] = os.path.abspath(args.metrics_file)
        config = recipes.compose(path, overrides)
    found = recipes.problems(config)
    if found:  # a user mistake, every one listed: exit 2, as easyr1 train's
        raise ConfigError(format_problems(found, str(path)))
    command = launch_command(path, overrides)
    if args.dry_run:
        print(f"{path.name}: checked with verl's config classes; no problems")
        print("would run: " + " ".join(command[1:]))
        return 0
    print("running: " + " ".join(command[1:]), flush=True)
    return subprocess.call(command, env=env)
