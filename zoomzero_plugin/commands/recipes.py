"""List the EasyR1 recipes and example scripts shipped with the package, and copy them out for editing.

  zoomzero recipes                          list them (name, kind, first line of the file's header)
  zoomzero recipes copy zoomzero.yaml       write ./yamls/zoomzero.yaml (the path the docs use)
  zoomzero recipes copy eval_nextgqa.sh DIR write DIR/eval_nextgqa.sh (and the helper it sources)
  zoomzero recipes copy all                 every recipe to ./yamls/, every example to ./examples/

A wheel carries the recipes and examples inside the package (:mod:`zoomzero_plugin.shipped`). An existing file is
never overwritten unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from ..errors import UsageError
from ..shipped import EXAMPLE, Shipped, shipped


def _helpers(item: Shipped) -> list[Path]:
    """Files an example sources (``_*.sh`` beside it), which must travel with it."""
    if item.kind != EXAMPLE:
        return []
    text = item.path.read_text(encoding="utf-8")
    return [p for p in sorted(item.path.parent.glob("_*.sh")) if p.name in text]


def copy_out(names: list[str], dest: Path | None, force: bool = False) -> list[Path]:
    """Copy shipped files out; returns the written paths. Raises :class:`UsageError` naming the problem.

    ``dest`` None puts each file under ``./yamls`` or ``./examples``; otherwise ``dest`` is a folder.
    """
    every = {s.name: s for s in shipped()}
    if not every:
        raise UsageError("no recipes or examples are installed with this package (a broken install? reinstall it)")
    by_stem = {Path(n).stem: s for n, s in every.items()}
    chosen = list(every.values()) if names == ["all"] else []
    if not chosen:
        unknown = [n for n in names if Path(n).name not in every and n not in by_stem]
        if unknown:
            raise UsageError(f"no shipped recipe or example named {', '.join(unknown)}; `zoomzero recipes` lists them")
        chosen = [every.get(Path(n).name) or by_stem[n] for n in names]
    plan: dict[Path, Path] = {}
    for item in chosen:
        target_dir = dest if dest is not None else Path(item.home)
        for source in [item.path, *_helpers(item)]:
            plan[target_dir / source.name] = source
    existing = [str(t) for t in plan if t.exists()]
    if existing and not force:
        raise UsageError(f"{', '.join(existing)} already exist(s); pass --force to overwrite")
    for target, source in plan.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return list(plan)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "copy"], default="list", help="list (default) or copy")
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="copy: file names (zoomzero.yaml, eval_nextgqa.sh) or 'all'"
    )
    parser.add_argument(
        "--to", type=Path, metavar="DIR", help="copy into DIR (default: ./yamls or ./examples, as in the docs)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite existing files")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        if args.names or args.to:
            raise UsageError("`zoomzero recipes` lists everything; to copy, say `zoomzero recipes copy NAME`")
        items = shipped()
        if not items:
            raise UsageError("no recipes or examples are installed with this package (a broken install? reinstall it)")
        width = max(len(f"{s.home}/{s.name}") for s in items)
        kind_width = max(len(s.kind) for s in items)
        for item in items:
            print(f"{item.home + '/' + item.name:<{width}}  {item.kind:<{kind_width}}  {item.summary()}")
        print(f"\n(installed in {items[0].path.parent.parent}); copy one out to edit it: zoomzero recipes copy NAME")
        return 0
    if not args.names:
        raise UsageError("name what to copy: `zoomzero recipes copy zoomzero.yaml` (or 'all')")
    for path in copy_out(args.names, args.to, args.force):
        print(f"wrote {path}")
    return 0
