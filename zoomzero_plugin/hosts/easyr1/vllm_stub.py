"""A stand-in for vLLM's import surface, so EasyR1's modules import where vLLM is not installed.

EasyR1 imports vLLM at the top of its rollout modules, and its config classes reach them
(``verl.trainer.config`` → ``verl.workers.rollout``), so even building a config needs ``import vllm``.
``easyr1 train --dry-run`` and ``easyr1 doctor`` check recipes and seams on machines without vLLM (a
laptop, a CPU box) under :func:`stand_in`: any ``vllm`` or ``vllm.<sub>`` module then imports, and any
name imported from it is a class that refuses to be built, so nothing can run on it by mistake.
``SamplingParams`` (a dataclass with the fields EasyR1 sets), ``RequestOutput`` and ``Logprob`` behave as data,
as in vLLM.

Never installed where a real vLLM is importable; :func:`is_stub` tells the two apart.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

VERSION = "0.0.0+easyr1-stub"
ROOT = "vllm"


class Refused(RuntimeError):
    """Raised when code tries to use a stand-in vLLM class for real."""


def _refusing_class(module: str, name: str) -> type:
    def refuse(self, *args: Any, **kwargs: Any) -> None:
        raise Refused(f"{module}.{name} is a stand-in: vLLM is not installed in this environment (needed to train)")

    return type(name, (), {"__init__": refuse, "__module__": module, "__doc__": "vLLM stand-in (refuses to be built)"})


@dataclass
class SamplingParams:
    """The ``vllm.SamplingParams`` fields EasyR1 sets or copies from its rollout config, and those a multi-turn
    rollout sets per round."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    seed: int | None = None
    max_tokens: int | None = 16
    ignore_eos: bool = False
    detokenize: bool = True
    logit_bias: dict[int, float] | None = None
    stop_token_ids: list[int] | None = None
    stop: list[str] | None = None
    include_stop_str_in_output: bool = False
    logprobs: int | None = None


@dataclass
class Logprob:
    """vLLM's per-token log-prob record (``CompletionOutput.logprobs[i][token_id]``)."""

    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


class RequestOutput:
    """vLLM's per-prompt result: ``outputs`` holds one completion per sample (each with ``.token_ids``)."""

    def __init__(self, outputs: list[Any]):
        self.outputs = outputs


class StubModule(ModuleType):
    """A ``vllm`` (sub)module: every public attribute is a refusing class, made on first use."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _refusing_class(self.__name__, name)
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return StubModule(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        module.__path__ = []  # a package: `import vllm.lora.models` finds its submodules here
        if module.__name__ == ROOT:
            module.__version__ = VERSION
            module.SamplingParams, module.RequestOutput, module.Logprob = SamplingParams, RequestOutput, Logprob


_FINDER = _Finder()


def is_stub(module: ModuleType | None) -> bool:
    return isinstance(module, StubModule)


def real_vllm_importable() -> bool:
    """True when a vLLM other than this stand-in can be imported (it is never imported here)."""
    loaded = sys.modules.get(ROOT)
    if loaded is not None:
        return not is_stub(loaded) and getattr(loaded, "__version__", "") != VERSION
    if _FINDER in sys.meta_path:
        return False
    return importlib.util.find_spec(ROOT) is not None


def install(force: bool = False) -> bool:
    """Serve ``vllm*`` imports from the stand-in unless a real vLLM is importable (``force``: even then).

    Returns True if the stand-in now serves them.
    """
    if _FINDER in sys.meta_path:
        return True
    if not force and real_vllm_importable():
        return False
    sys.meta_path.insert(0, _FINDER)
    return True


def uninstall() -> None:
    """Stop serving ``vllm*`` imports and forget the stand-in modules (modules that imported names keep them)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n, m in sys.modules.items() if (n == ROOT or n.startswith(ROOT + ".")) and is_stub(m)]:
        del sys.modules[name]


@contextmanager
def stand_in() -> Iterator[bool]:
    """Within the block, ``import vllm…`` works (the stand-in, unless vLLM is installed). Yields whether it is the
    stand-in."""
    installed_here = _FINDER not in sys.meta_path and install()
    try:
        yield installed_here or _FINDER in sys.meta_path
    finally:
        if installed_here:
            uninstall()
