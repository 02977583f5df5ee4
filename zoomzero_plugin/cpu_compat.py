"""Make CUDA builds of torchvision and torchaudio importable next to a CPU build of torch.

The package registry only has CUDA builds of torchvision. Their compiled ops cannot load against a CPU
torch, and ``import torchvision`` then fails while registering fake kernels for ``torchvision::nms``.
Declaring the two op schemas first lets the pure-Python parts (transforms, used by qwen-vl-utils and
the Qwen video processor) import. On a normal install, where the compiled ops load, this does nothing.

torchaudio (pulled in by LLaMA-Factory, which imports it unconditionally) fails the same way: its
extension needs ``libc10_cuda.so``. :func:`ensure_torchaudio_importable` makes a CPU torch treat that
extension as absent, a state torchaudio supports itself (it then imports without compiled kernels).

``scripts/install-cpu.sh`` makes both hold for ANY code in its venv (Ray workers, ``python3 -m
verl.trainer.main``, ``llamafactory-cli``): :func:`install_pth` writes a start-up file (``.pth``) into the
venv's site-packages whose one line calls :func:`install_import_hook`; it runs
:func:`ensure_torchvision_importable` just before the first ``import torchvision`` of each process and
installs the torchaudio guard (nothing heavy is imported at start-up). :func:`remove_pth` takes it out.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

from .files import write_text

# Where training on a CPU needs more than this package: the environment `easyr1 train --cpu` and `zoomzero demo --train`
# run in (EasyR1 v0.3.2 with its vLLM's CPU build), and EasyR1 main beside it (the EasyR1 that trains Qwen3-VL).
VLLM_ENV_INSTALL = (
    "install the vLLM environment with `bash scripts/install-cpu.sh --vllm` (from a clone of zoomzero-plugin, in a "
    "venv of its own: EasyR1 v0.3.2 with vLLM 0.11.0's CPU build on torch 2.8.0, ~9 GB) and run this there"
)
EASYR1_MAIN_INSTALL = (
    "from a clone, `bash scripts/install-cpu.sh --easyr1-main` in the vLLM environment puts EasyR1 main in "
    ".easyr1-main/; `PYTHONPATH=.easyr1-main` then selects it"
)
PTH_NAME = "zoomzero_cpu_torchvision.pth"  # sorts after setuptools' __editable__ finders, so the package is found
PTH_LINE = "import zoomzero_plugin.cpu_compat as _zz; _zz.install_import_hook()\n"

_LIBRARY = None  # keeps the schema registration alive for the life of the process


def ensure_torchvision_importable() -> bool:
    """Declare torchvision's op schemas if its compiled ops cannot load. Returns True if it did."""
    global _LIBRARY
    uninstall_import_hook()  # done now either way (and its find_spec must not re-enter this function)
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


class _BeforeTorchvision(importlib.abc.MetaPathFinder):
    """Runs :func:`ensure_torchvision_importable` when ``torchvision`` is first imported, then steps aside."""

    def find_spec(self, fullname, path, target=None):
        if fullname == "torchvision":
            ensure_torchvision_importable()
        return None  # the regular finders import it


_HOOK = _BeforeTorchvision()


def install_import_hook() -> None:
    """Make the next ``import torchvision`` of this process declare the op schemas first if needed, and
    ``import torchaudio`` succeed on a CPU torch (idempotent; imports nothing)."""
    if "torchvision" not in sys.modules and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
    ensure_torchaudio_importable()


def uninstall_import_hook() -> None:
    if _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)


def pth_path() -> Path:
    """Where the start-up file goes: this interpreter's (the venv's) site-packages."""
    return Path(sysconfig.get_paths()["purelib"]) / PTH_NAME


def install_pth() -> Path:
    """Write the start-up file into this venv's site-packages (atomically); returns its path."""
    return write_text(pth_path(), PTH_LINE)


def remove_pth() -> None:
    pth_path().unlink(missing_ok=True)


class CpuCuda(ModuleType):
    """``torch.cuda`` as a trainer's CPU mode shows it (EasyR1's modules, verl's CPU platform): the calls the trainers
    make answered for the CPU, the rest torch.cuda's own (anything else fails as on a machine without CUDA)."""

    def __init__(self, real: ModuleType):
        super().__init__("torch.cuda", "torch.cuda answered for the CPU")
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @staticmethod
    def current_device() -> Any:
        import torch

        return torch.device("cpu")  # FSDP's device_id and every DataProto.to() in the workers

    @staticmethod
    def get_device_name(device: Any = None) -> str:
        return "CPU"  # the base Worker checks for "AMD"; the flops counter knows no such device (MFU 0)

    @staticmethod
    def set_device(device: Any) -> None:
        return None

    @staticmethod
    def empty_cache() -> None:
        return None

    @staticmethod
    def max_memory_allocated(device: Any = None) -> int:
        return 0

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return 0

    @staticmethod
    def memory_reserved(device: Any = None) -> int:
        return 0

    @staticmethod
    def ipc_collect() -> None:
        return None

    @staticmethod
    def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
        return None

    @staticmethod
    def max_memory_reserved(device: Any = None) -> int:
        return 0

    @staticmethod
    def mem_get_info(device: Any = None) -> tuple[int, int]:
        return 0, 0

    @staticmethod
    def get_rng_state(device: Any = "cuda") -> Any:
        import torch

        return torch.get_rng_state()  # the sharding manager's separate generation RNG stream, on the CPU generator

    @staticmethod
    def set_rng_state(state: Any, device: Any = "cuda") -> None:
        import torch

        torch.set_rng_state(state)

    @staticmethod
    def manual_seed(seed: int) -> None:
        import torch

        torch.manual_seed(seed)

    manual_seed_all = manual_seed
