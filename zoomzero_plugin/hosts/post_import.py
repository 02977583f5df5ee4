"""Run a callback right after a module is imported (or now, if it already is).

Seams patch a host's modules only when something imports them, so activating a host costs nothing
in a Ray worker that never touches the trainer (and does not import vLLM where the trainer would not). A callback
that raises makes the import itself fail, so a broken seam stops the process at the import.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from collections import defaultdict
from collections.abc import Callable
from types import ModuleType

Callback = Callable[[ModuleType], None]

_callbacks: dict[str, list[Callback]] = defaultdict(list)
_lock = threading.RLock()
_searching: set[str] = set()


def when_imported(module_name: str, callback: Callback) -> None:
    """Call ``callback(module)`` once ``module_name`` is imported; immediately if it already is."""
    with _lock:
        _install_finder()
        module = sys.modules.get(module_name)
        if module is None:
            _callbacks[module_name].append(callback)
            return
    callback(module)


def initializing(module: ModuleType) -> bool:
    """True while ``module``'s own code is still running (it is in sys.modules but half-built)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _run(module: ModuleType) -> None:
    with _lock:
        callbacks = _callbacks.pop(module.__name__, [])
    for callback in callbacks:
        callback(module)


class _Loader(importlib.abc.Loader):
    """Delegates to the real loader, then runs the callbacks registered for the module."""

    def __init__(self, loader: importlib.abc.Loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _run(module)

    def __getattr__(self, name):  # get_source, get_filename, is_package… for inspect and linecache
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in _callbacks or fullname in _searching:
            return None
        _searching.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            _searching.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


_FINDER = _Finder()


def _install_finder() -> None:
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
