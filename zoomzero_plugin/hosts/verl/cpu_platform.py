"""The CPU as a verl platform (``VERL_PLATFORM=cpu``), registered through verl's own platform registry.

verl asks its platform for the device name, the ``torch.cuda``-shaped device module, the collective backend, the Ray
resource and whether tensors can cross processes by IPC. On the CPU: device ``cpu`` (FSDP meshes and every
``.to(device)``), a device module whose CUDA calls are answered for the CPU (:class:`~zoomzero_plugin.cpu_compat.
CpuCuda` over ``torch.cpu``: ``current_device()`` is ``torch.device("cpu")``, which verl uses as a device), gloo,
and the Ray resource ``GPU``: each "GPU" the recipe asks for is one CPU worker process, declared to a local Ray by
the launcher (:mod:`.cpu_mode`). IPC is off, so verl's weight sync to vLLM goes through shared memory.
"""

from __future__ import annotations

from contextlib import contextmanager
from types import ModuleType
from typing import Any

import torch
from verl.plugin.platform import PlatformBase, PlatformRegistry

from zoomzero_plugin.cpu_compat import CpuCuda

NAME = "cpu"


@PlatformRegistry.register(platform=NAME)
class CpuPlatform(PlatformBase):
    """verl's platform interface answered on CPU processes."""

    _device = CpuCuda(torch.cpu)

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return self._device

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return False  # never auto-detected: chosen by VERL_PLATFORM=cpu only (zoomzero verl train --cpu)

    def current_device(self) -> Any:
        return torch.device("cpu")

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"  # what Ray sets for the "GPU" each worker holds

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None
