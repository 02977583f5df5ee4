"""Timing and memory on one device: synchronised wall time, peak allocated memory, and out-of-memory caught."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

import torch

GIB = 2**30


class Device:
    """The run's device. On a CPU the memory figures are None (PyTorch keeps no peak there)."""

    def __init__(self, name: str):
        self.device = torch.device(name)
        self.cuda = self.device.type == "cuda"

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def reset_peak(self) -> None:
        if self.cuda:
            torch.cuda.reset_peak_memory_stats(self.device)

    def peak_gib(self) -> float | None:
        """Peak memory allocated by tensors since the last :meth:`reset_peak`."""
        return round(torch.cuda.max_memory_allocated(self.device) / GIB, 2) if self.cuda else None

    def reserved_gib(self) -> float | None:
        """Peak memory the caching allocator held (what the card had to have) since the last :meth:`reset_peak`."""
        return round(torch.cuda.max_memory_reserved(self.device) / GIB, 2) if self.cuda else None

    def total_gib(self) -> float | None:
        return round(torch.cuda.get_device_properties(self.device).total_memory / GIB, 2) if self.cuda else None

    def name(self) -> str:
        return torch.cuda.get_device_name(self.device) if self.cuda else "CPU"

    def free(self) -> None:
        """Give cached blocks back (between sections, after an out-of-memory)."""
        gc.collect()
        if self.cuda:
            torch.cuda.empty_cache()

    def timed(self, fn: Callable[[], Any]) -> tuple[float, Any]:
        """(seconds, result) of ``fn()``, the device synchronised on both sides; the peak is reset first."""
        self.sync()
        self.reset_peak()
        start = time.perf_counter()
        result = fn()
        self.sync()
        return time.perf_counter() - start, result

    def attempt(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """``fn()`` timed, or its out-of-memory: ``{"status": "ok" | "out of memory", "seconds", "peak_gib",
        "reserved_gib"}`` (the peaks at the failure for an out-of-memory)."""
        try:
            seconds, _ = self.timed(fn)
            status = "ok"
        except torch.OutOfMemoryError:
            seconds, status = None, "out of memory"
        out = {"status": status, "seconds": seconds, "peak_gib": self.peak_gib(), "reserved_gib": self.reserved_gib()}
        self.free()
        return out
