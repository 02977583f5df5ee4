"""Package faces whose names load their modules on first use, so importing a package costs almost nothing.

A package's ``__init__`` maps each public name to the module that defines it and installs the face::

    _NAMES = {"ZoomPlan": "zoom", "parse_response": "parsing"}
    __getattr__, __dir__ = lazy_names(__name__, _NAMES)
    __all__ = [...]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` that loads ``package.<names[name]>`` on first use of ``name``, and its ``__dir__``."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(import_module(f".{names[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
