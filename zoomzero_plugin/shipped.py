"""List the EasyR1 recipes and example scripts shipped with the package, and copy them out for editing.

  zoomzero recipes                          list them (name, kind, first line of the file's header)
  zoomzero recipes copy zoomzero.yaml       write ./yamls/zoomzero.yaml (the path the docs use)
  zoomzero recipes copy eval_nextgqa.sh DIR write DIR/eval_nextgqa.sh (and the helper it sources)
  zoomzero recipes copy all                 every recipe to ./yamls/, every example to ./examples/

Recipes are the YAML files of ``yamls/`` and examples the scripts of ``examples/`` at the top of the
repository; a wheel carries both inside the package (``zoomzero_plugin/yamls``, ``zoomzero_plugin/examples``),
so ``easyr1 train yamls/zoomzero.yaml`` works outside a clone too (it falls back to the shipped recipe, and
says so). An existing file is never overwritten unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError

FOLDERS = {"yamls": "*.yaml", "examples": "*.sh"}  # the docs' folder -> the files it ships
EASYR1, LLAMAFACTORY, EXAMPLE = "EasyR1 recipe", "LLaMA-Factory recipe", "example"
_PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Shipped:
    name: str  # file name, e.g. "zoomzero.yaml"
    home: str  # the folder the docs put it in: "yamls" or "examples"
    path: Path  # where it is installed (inside the package, or in the clone for an editable install)

    @property
    def kind(self) -> str:
        """EasyR1 recipe | LLaMA-Factory recipe (a top-level ``stage:`` key) | example."""
        if self.home == "examples":
            return EXAMPLE
        return LLAMAFACTORY if "\nstage:" in "\n" + self.path.read_text(encoding="utf-8") else EASYR1

    def summary(self) -> str:
        """The first comment line of the file's header (after a shebang)."""
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#!"):
                continue
            return line.lstrip("#").strip() if line.startswith("#") else ""
        return ""


def folder(home: str) -> Path | None:
    """Where ``yamls`` or ``examples`` is installed: inside the package (a wheel), else the clone's top level."""
    for candidate in (_PACKAGE / home, _PACKAGE.parent / home):
        if candidate.is_dir():
            return candidate
    return None


def shipped(kind: str | None = None) -> list[Shipped]:
    """Every shipped file (of ``kind`` only, if given), by folder and name; helpers (``_*``) are left out."""
    out = []
    for home, pattern in FOLDERS.items():
        where = folder(home)
        if where is not None:
            out += [Shipped(p.name, home, p) for p in sorted(where.glob(pattern)) if not p.name.startswith("_")]
    return [s for s in out if kind is None or s.kind == kind]


def find_recipe(asked: str) -> Shipped | None:
    """The shipped EasyR1 recipe a missing local path means: ``yamls/NAME.yaml``, ``NAME.yaml`` or ``NAME``; else None.

    Only a relative path at most one folder deep, that folder being ``yamls``, matches: an explicit path
    elsewhere names the user's own file.
    """
    path = Path(asked)
    if path.is_absolute() or len(path.parts) > 2 or (len(path.parts) == 2 and path.parts[0] != "yamls"):
        return None
    name = path.name if path.suffix == ".yaml" else path.name + ".yaml"
    return next((s for s in shipped(EASYR1) if s.name == name), None)


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
