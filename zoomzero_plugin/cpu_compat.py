"""Make CUDA builds of torchvision and torchaudio importable next to a CPU build of torch.

The package registry only has CUDA builds of torchvision. Their compiled ops cannot load against a CPU
torch, and ``import torchvision`` then fails while registering fake kernels for ``torchvision::nms``.
Declaring the two op schemas first lets the pure-Python parts (transforms, used by qwen-vl-utils and
the Qwen video processor) import. On a normal install, where the compiled ops load, this does nothing.

torchaudio (pulled in by LLaMA-Factory, which imports it unconditionally) fails the same way: its
extension needs ``libc10_cuda.so``. :func:`ensure_torchaudio_importable` makes a CPU torch treat that
extension as absent, a state torchaudio supports itself (it then imports without compiled kernels).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

_LIBRARY = None  # keeps the schema registration alive for the life of the process


def ensure_torchvision_importable() -> bool:
    """Declare torchvision's op schemas if its compiled ops cannot load. Returns True if it did."""
    global _LIBRARY
    if _LIBRARY is not None or "torchvision" in sys.modules:
        return False
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        return False
    import torch

    compiled = sorted(Path(spec.origin).parent.glob("_C*.so")) + sorted(Path(spec.origin).parent.glob("_C*.pyd"))
    if not compiled:
        return False
    try:
        torch.ops.load_library(str(compiled[0]))
        return False
    except OSError:
        pass
    _LIBRARY = torch.library.Library("torchvision", "DEF")
    _LIBRARY.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIBRARY.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    return True


_AUDIO_UTILS = "torchaudio._extension.utils"


class _TorchaudioExtensionGuard(importlib.abc.MetaPathFinder):
    """Finds torchaudio's extension loader as usual, then wraps its ``_load_lib``: on a CPU-only torch, a
    compiled library that cannot load (``OSError``) counts as not installed instead of failing the import."""

    def find_spec(self, name, path, target=None):
        if name != _AUDIO_UTILS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            load = module._load_lib

            def _load_lib(lib: str) -> bool:
                try:
                    return load(lib)
                except OSError:
                    import torch

                    if torch.version.cuda is not None:  # a CUDA torch: a real installation problem
                        raise
                    return False

            module._load_lib = _load_lib

        spec.loader.exec_module = exec_module
        return spec


def ensure_torchaudio_importable() -> bool:
    """Install the torchaudio guard (cheap; imports nothing) before torchaudio is first imported.
    Returns True if it did; False when torchaudio is already imported or the guard is in place."""
    if "torchaudio" in sys.modules or any(isinstance(f, _TorchaudioExtensionGuard) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, _TorchaudioExtensionGuard())
    return True
