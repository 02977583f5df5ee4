"""The EasyR1 recipes and example scripts shipped with the package, and where they are installed.

Recipes are the YAML files of ``yamls/`` and examples the scripts of ``examples/`` at the top of the
repository; a wheel carries both inside the package (``zoomzero_plugin/yamls``, ``zoomzero_plugin/examples``),
so ``easyr1 train yamls/zoomzero.yaml`` works outside a clone too (it falls back to the shipped recipe, and
says so: :func:`find_recipe`). ``zoomzero recipes`` lists and copies them out
(:mod:`zoomzero_plugin.commands.recipes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
