"""What drives vLLM for both methods and both hosts: below the tools (``inference``) and the hosts (``hosts/easyr1``),
over nothing of this package.

- :mod:`.stream`: continuous batching on a vLLM ``LLM`` (:class:`~.stream.EngineStream`: requests go in as they are
  ready, completions come out as they end) and :class:`~.stream.EngineMeter`, which meters engine steps;
- :mod:`.schedule`: the turn schedules of a multi-turn agent (``continuous`` over a stream, or ``rounds``);
- :mod:`.cpu_platform`: the ``vllm.platform_plugins`` entry point that lets the registry's CPU build of vLLM find its
  platform, and the engine settings a CPU needs.

Nothing here imports vLLM at module level; names load their modules on first use.
"""

from ..lazy import lazy_names

_NAMES = {
    **dict.fromkeys(("EngineMeter", "EngineStream", "metered"), "stream"),
    **dict.fromkeys(("SCHEDULES", "Stream", "check_schedule", "continuous"), "schedule"),
    **dict.fromkeys(("CPU_ENGINE_DEFAULTS", "on_cpu"), "cpu_platform"),
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)
