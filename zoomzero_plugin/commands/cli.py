"""``zoomzero``: the command line. Each subcommand lives in its own module, imported only when used.

A subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int`` and a docstring whose
first line is the one-line help. Its top-level imports stay light (argparse, the core): heavy libraries
(torch models, EasyR1, vLLM) are imported inside ``run``, so ``zoomzero --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import cli_edge

# name -> module; "data" style groups are dotted names ("data convert").
COMMANDS: dict[str, str] = {
    "demo": "zoomzero_plugin.commands.demo",
    "score": "zoomzero_plugin.eval.score",
    "eval": "zoomzero_plugin.eval.runner",
    "data convert": "zoomzero_plugin.data.convert",
    "data check": "zoomzero_plugin.data.check",
    "data filter": "zoomzero_plugin.data.filter",
    "data export-sft": "zoomzero_plugin.data.sft.export",
    "recipes": "zoomzero_plugin.commands.recipes",
    "lmms-eval tasks": "zoomzero_plugin.integrations.lmms_eval.task_folder",
    "verl train": "zoomzero_plugin.hosts.verl.cli",
    "verl rows": "zoomzero_plugin.hosts.verl.rows",
    "verl doctor": "zoomzero_plugin.hosts.verl.doctor",
}


def _summary(module) -> str:
    doc = (module.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zoomzero",
        description="Evidence-grounded RL for video LLMs: demo, data tools, inference and evaluation.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    groups: dict[str, argparse._SubParsersAction] = {}
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        target = sub
        *group, leaf = name.split()
        if group:
            if group[0] not in groups:
                g = sub.add_parser(group[0], help=f"{group[0]} tools")
                groups[group[0]] = g.add_subparsers(dest=f"{group[0]}_command", metavar="COMMAND", required=True)
            target = groups[group[0]]
        p = target.add_parser(
            leaf,
            help=_summary(module),
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand through :func:`~zoomzero_plugin.errors.cli_edge`: a
    :class:`~zoomzero_plugin.errors.ZoomzeroError` becomes one line on stderr, a closed stdout a quiet end."""
    parsed: list[argparse.Namespace] = []

    def name() -> str:
        args = parsed[0] if parsed else None
        words = [args.command, getattr(args, f"{args.command}_command", None)] if args else []
        return " ".join(filter(None, ["zoomzero", *words]))

    def command() -> int:
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra and hasattr(args, "overrides") and all("=" in a and not a.startswith("-") for a in extra):
            args.overrides += extra  # overrides given after an option: `verl train R.yaml --cpu a=1`
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        parsed.append(args)
        return args._run(args)

    return cli_edge(name, command)


if __name__ == "__main__":
    sys.exit(main())
