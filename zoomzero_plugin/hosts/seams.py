"""Seams, for every host: a declared place where a host wraps one of its trainer's (or vLLM's) names.

A :class:`Seam` names its target (``module`` + ``Class.attr`` or ``attr``), why it is wrapped and what breaks if the
trainer changes it; every wrapper calls the original. A :class:`SeamTable` is one host's list: it applies each seam
when its module is imported (:mod:`.post_import`), in every process where the host is active; applying twice is a
no-op. A missing target or a changed signature raises :class:`SeamError` naming the trainer's version and the seam, so
the run stops instead of silently training something else. ``status`` reports a seam for a host's doctor.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from zoomzero_plugin.errors import ZoomzeroError

from .post_import import initializing, when_imported

MARK = "__zoomzero_seam__"


class SeamError(ZoomzeroError, RuntimeError):
    """A trainer no longer has what a seam wraps (a missing target or a changed signature); names the version."""


@dataclass(frozen=True)
class Seam:
    name: str
    module: str
    targets: tuple[str, ...]  # "attr" or "Class.attr"
    params: tuple[str, ...]  # leading parameters the wrapper relies on
    wrap: Callable[[Callable], Callable]
    why: str
    breaks: str
    any_of: bool = False  # targets are alternatives for different trainer versions: at least one must exist
    holders: tuple[str, ...] = ()  # modules that import the target by name and must see the wrapper too
    upstream: str = ""  # a bug of the trainer this seam works around, worth reporting upstream (one line)
    since: str = ""  # the trainer version that added ``module`` (an older one lacks it and needs no seam); "" = all


@dataclass(frozen=True)
class SeamTable:
    """One host's seams, and how its errors name the trainer."""

    trainer: str  # "EasyR1", "verl"
    version_module: str  # the module whose __version__ is the trainer's version
    supported: str  # the versions this host supports, in words
    doctor: str  # the command that prints every seam's status
    seams: tuple[Seam, ...]

    def __post_init__(self) -> None:
        names = [s.name for s in self.seams]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # a seam is declared once (`named` finds it; the tables and counts list it once)
            raise ValueError(f"{self.trainer} seam table: {twice} declared more than once")

    def version(self) -> str:
        return str(getattr(sys.modules.get(self.version_module), "__version__", "unknown"))

    def error(self, seam: Seam, problem: str) -> SeamError:
        return SeamError(
            f"{self.trainer} {self.version()}: seam '{seam.name}' ({seam.module}): {problem}. zoomzero-plugin's "
            f"{self.trainer} host supports {self.supported}; without this seam: {seam.breaks}. Run `{self.doctor}` "
            "for every seam's status."
        )

    def named(self, name: str) -> Seam:
        return next(s for s in self.seams if s.name == name)

    def targets(self, seam: Seam, module: ModuleType) -> list[tuple[str, tuple[Any, str, Any]]]:
        """The present targets, after checking that the seam can be applied (raises :class:`SeamError`)."""
        found = [(t, r) for t in seam.targets if (r := _resolve(module, t)) is not None]
        missing = [t for t in seam.targets if t not in dict(found)]
        if not found or (missing and not seam.any_of):
            raise self.error(seam, f"{', '.join(missing)} not found")
        for target, (_, _, current) in found:
            self._check_params(seam, target, getattr(current, "__wrapped__", current))
        return found

    def _check_params(self, seam: Seam, target: str, fn: Callable) -> None:
        if not seam.params:  # a wrapper that passes everything through (or a module it stands in for)
            return
        try:
            names = tuple(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            raise self.error(seam, f"{target} is not a function") from None
        if names[: len(seam.params)] != seam.params:
            expected = ", ".join(seam.params)
            raise self.error(seam, f"{target} takes ({', '.join(names)}), the wrapper expects ({expected}, …)")

    def apply(self, seam: Seam, module: ModuleType) -> list[str]:
        """Wrap every present target of ``seam`` in ``module``; returns the targets (wrapped now or before)."""
        found = self.targets(seam, module)
        for _, (owner, attr, current) in found:
            if getattr(current, MARK, None) != seam.name:
                updated = () if isinstance(current, (type, ModuleType)) else functools.WRAPPER_UPDATES
                wrapper = functools.update_wrapper(seam.wrap(current), current, updated=updated)
                setattr(wrapper, MARK, seam.name)
                setattr(owner, attr, wrapper)
        for holder in seam.holders:
            when_imported(holder, lambda m, s=seam, src=module: self._rebind(s, src, m))
        return [t for t, _ in found]

    def _rebind(self, seam: Seam, source: ModuleType, holder: ModuleType) -> None:
        attr = seam.targets[0]
        wrapper = getattr(source, attr)
        if initializing(holder):  # it is importing the source right now: its `from … import` binds the wrapper
            return
        current = getattr(holder, attr, None)
        if current is None:
            raise self.error(seam, f"{holder.__name__} no longer imports {attr} from {source.__name__}")
        if current is not wrapper:
            if getattr(current, MARK, None) is None and current is not getattr(wrapper, "__wrapped__", None):
                raise self.error(seam, f"{holder.__name__}.{attr} is not {self.trainer}'s {source.__name__}.{attr}")
            setattr(holder, attr, wrapper)

    def install(self, seams: Sequence[Seam] | None = None) -> None:
        """Apply every seam (or ``seams``) now or when its module is imported (idempotent)."""
        for seam in self.seams if seams is None else seams:
            when_imported(seam.module, lambda m, s=seam: self.apply(s, m))

    def status(self, seam: Seam, import_modules: bool = False) -> tuple[str, str]:
        """(state, detail): patched | unpatched | not imported | missing | import failed, or not needed (the
        installed trainer predates the seam's module: :attr:`Seam.since`).

        Never patches anything itself; with ``import_modules`` it imports the seam's module (which applies the
        seam if the host is active in this process).
        """
        module = sys.modules.get(seam.module)
        if module is None and import_modules:
            try:
                module = importlib.import_module(seam.module)
            except SeamError as e:
                return "missing", str(e)
            except ModuleNotFoundError as e:
                if seam.since and e.name == seam.module:
                    detail = (
                        f"{self.trainer} {self.version()} has no {seam.module} ({self.trainer} {seam.since} added it)"
                    )
                    return "not needed", detail
                return "import failed", f"{type(e).__name__}: {e}"
            except Exception as e:  # noqa: BLE001 - reported, not raised
                return "import failed", f"{type(e).__name__}: {e}"
        if module is None:
            return "not imported", ""
        try:
            found = self.targets(seam, module)
        except SeamError as e:
            return "missing", str(e)
        names = ", ".join(t for t, _ in found)
        if all(getattr(r[2], MARK, None) == seam.name for _, r in found):
            return "patched", names
        return "unpatched", f"{names} (present and compatible; the host is not active in this process)"


def _resolve(module: ModuleType, target: str) -> tuple[Any, str, Any] | None:
    """(owner, attribute, current value) of ``target`` in ``module``, or None if absent."""
    *owner_path, attr = target.split(".")
    owner: Any = module
    for part in owner_path:
        owner = getattr(owner, part, None)
        if owner is None:
            return None
    if attr not in vars(owner):
        return None
    return owner, attr, vars(owner)[attr]
