"""Make a CUDA build of torchvision importable next to a CPU build of torch.

The package registry only has CUDA builds of torchvision. Their compiled ops cannot load against a CPU
torch, and ``import torchvision`` then fails while registering fake kernels for ``torchvision::nms``.
Declaring the two op schemas first lets the pure-Python parts (transforms, used by qwen-vl-utils and
the Qwen video processor) import. On a normal install, where the compiled ops load, this does nothing.
"""

from __future__ import annotations

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
