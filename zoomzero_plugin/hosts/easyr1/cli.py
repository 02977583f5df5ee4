"""``easyr1``: run EasyR1 with its installed plugins active everywhere it trains.

Plugins are packages that declare entry points in the group ``easyr1.plugins`` (zoomzero-plugin is one).
They can add advantage estimators (``algorithm.adv_estimator: tokenadv``), named reward functions
(``worker.reward.reward_function: zoomzero:gvqa``), config checks, rollout hooks and rollouts that own generation
(the VideoZoomer multi-turn rollout).

Three ways to launch, all running EasyR1's own ``verl.trainer.main``:

  easyr1 train RECIPE.yaml [key=value ...]              checks the recipe, then trains
  RAY_RUNTIME_ENV_HOOK=zoomzero_plugin.hosts.easyr1.activation.ray_runtime_env_hook \\
      python3 -m verl.trainer.main config=RECIPE.yaml   EasyR1's usual command, plugins active
  ray job submit --runtime-env-json "$(easyr1 runtime-env)" -- \\
      python3 -m verl.trainer.main config=RECIPE.yaml   an existing (multi-node) Ray cluster
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

from zoomzero_plugin.errors import cli_edge

EPILOG = (
    "Docs: docs/easyr1.md. `easyr1 train RECIPE --dry-run` validates without starting Ray or touching a GPU "
    "(vLLM need not be installed). Exit status: 0 done, 1 a check failed, 2 a problem to fix (one line)."
)


def _add_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "recipe",
        help="EasyR1 YAML recipe (the `config=` file of verl.trainer.main); a missing "
        "yamls/NAME.yaml falls back to the recipe of that name shipped with zoomzero-plugin",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="EasyR1 overrides, e.g. worker.rollout.n=8")
    parser.add_argument("--dry-run", action="store_true", help="validate and print the effective settings, then exit")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="run the whole loop on CPU processes (gloo FSDP, vLLM's CPU engine; the recipe's CUDA-only settings are "
        "switched, one line each): try a recipe on a tiny model before paying for GPUs (docs/easyr1.md)",
    )
    parser.add_argument(
        "--metrics-file",
        metavar="PATH",
        help="also append every logged step's metrics to PATH as one JSON line per step",
    )
    parser.add_argument(
        "--check-rows",
        type=int,
        default=4,
        metavar="N",
        help="check the first N rows of the train and val files: columns, readable videos, prompt length "
        "measured with EasyR1's RLHFDataset (default 4; 0 skips)",
    )


def _host(name: str) -> Any:
    """``module:attribute`` of this package, imported when a command runs: the host's modules pull in torch and
    every seam, which ``easyr1 --help`` need not wait for (the same rule as ``zoomzero``'s subcommands)."""
    module, _, attribute = name.partition(":")
    return getattr(importlib.import_module(f".{module}", __package__), attribute)


def _train(args: argparse.Namespace) -> int:
    return _host("launcher:train")(
        args.recipe,
        args.overrides,
        dry_run=args.dry_run,
        check_rows=args.check_rows,
        cpu=args.cpu,
        metrics_file=args.metrics_file,
    )


def _add_merge(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("actor_dir", help="a checkpoint's actor folder: CHECKPOINTS/global_step_N/actor")
    parser.add_argument("--out", help="where to write the model (default: ACTOR_DIR/huggingface, as EasyR1's merger)")
    parser.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), help="cast the weights (default: as trained)")


def _merge(args: argparse.Namespace) -> int:
    print(f"merged into {_host('merge:merge')(args.actor_dir, args.out, args.dtype)}")
    return 0


def _runtime_env(args: argparse.Namespace) -> int:
    print(json.dumps(_host("activation:runtime_env")()))
    return 0


# name -> (help, description, add_arguments, run)
COMMANDS: dict[
    str, tuple[str, str, Callable[[argparse.ArgumentParser], None] | None, Callable[[argparse.Namespace], int]]
] = {
    "train": (
        "check a recipe, then run EasyR1's verl.trainer.main with the plugins active",
        "Build the recipe with EasyR1's own config classes, check it (unknown keys, missing files, the first rows "
        "and their videos, plugin requirements such as tokenadv's), then run verl.trainer.main with the plugins "
        "active in the driver, the Runner actor and every Ray worker.",
        _add_train,
        _train,
    ),
    "plugins": (
        "list the installed plugins and what each adds",
        "",
        None,
        lambda args: _host("doctor:print_plugins")(),
    ),
    "merge": (
        "turn a checkpoint's actor shards into a Hugging Face model folder",
        "Join the FSDP shards of CHECKPOINTS/global_step_N/actor into one model, saved with its config and processor "
        "(what `zoomzero eval --model` and vLLM load). EasyR1's own scripts/model_merger.py does the same from a "
        "clone of EasyR1; its pip package does not ship it.",
        _add_merge,
        _merge,
    ),
    "doctor": (
        "versions, video backend, GPUs, and the status of every EasyR1 seam",
        "Exit 0 when this machine can train with the plugins (every seam in place, vLLM installed), else 1.",
        None,
        lambda args: _host("doctor:doctor")(),
    ),
    "runtime-env": (
        "print the runtime_env JSON for `ray job submit --runtime-env-json`",
        "Print the runtime_env that activates the plugins in every worker of a Ray job and validates the recipe "
        "in its driver. Merge it with your own runtime_env if you have one.",
        None,
        _runtime_env,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="easyr1", description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_text, description, add_arguments, run) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=description or help_text)
        if add_arguments is not None:
            add_arguments(command)
        command.set_defaults(_run=run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command through :func:`~zoomzero_plugin.errors.cli_edge`: a
    :class:`~zoomzero_plugin.errors.ZoomzeroError` becomes one line on stderr (exit 2), a closed stdout a quiet end."""
    parsed: list[argparse.Namespace] = []

    def command() -> int:
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra and args.command == "train" and all("=" in a and not a.startswith("-") for a in extra):
            args.overrides += extra  # overrides given after an option: `train R.yaml --dry-run a=1`
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        parsed.append(args)
        return args._run(args)

    return cli_edge(lambda: f"easyr1 {parsed[0].command}" if parsed else "easyr1", command)


if __name__ == "__main__":
    sys.exit(main())
