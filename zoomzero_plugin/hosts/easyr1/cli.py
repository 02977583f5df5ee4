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
import json
import sys

from .activation import runtime_env
from .doctor import doctor, print_plugins
from .launcher import train

EPILOG = "Docs: docs/easyr1.md. `easyr1 train RECIPE --dry-run` validates without starting Ray or touching a GPU."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="easyr1", description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    train = sub.add_parser(
        "train",
        help="check a recipe, then run EasyR1's verl.trainer.main with the plugins active",
        description="Build the recipe with EasyR1's own config classes, check it (unknown keys, missing files, "
        "the first rows and their videos, plugin requirements such as tokenadv's), then run "
        "verl.trainer.main with the plugins active in the driver, the Runner actor and every Ray worker.",
    )
    train.add_argument("recipe", help="EasyR1 YAML recipe (the `config=` file of verl.trainer.main)")
    train.add_argument("overrides", nargs="*", metavar="key=value", help="EasyR1 overrides, e.g. worker.rollout.n=8")
    train.add_argument("--dry-run", action="store_true", help="validate and print the effective settings, then exit")
    train.add_argument(
        "--check-rows", type=int, default=4, metavar="N",
        help="check the first N rows of the train and val files: columns, readable videos, prompt length "
        "measured with EasyR1's RLHFDataset (default 4; 0 skips)",
    )

    sub.add_parser("plugins", help="list the installed plugins and what each adds")
    sub.add_parser("doctor", help="versions, video backend, GPUs, and the status of every EasyR1 seam")
    sub.add_parser(
        "runtime-env",
        help="print the runtime_env JSON for `ray job submit --runtime-env-json`",
        description="Print the runtime_env that activates the plugins in every worker of a Ray job and "
        "validates the recipe in its driver. Merge it with your own runtime_env if you have one.",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "train" and all("=" in a and not a.startswith("-") for a in extra):
        args.overrides += extra  # overrides given after an option: `train R.yaml --dry-run a=1`
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "train":
        return train(args.recipe, args.overrides, dry_run=args.dry_run, check_rows=args.check_rows)
    if args.command == "plugins":
        return print_plugins()
    if args.command == "doctor":
        return doctor()
    print(json.dumps(runtime_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
