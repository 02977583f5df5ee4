"""The EasyR1 host: a plugin system for EasyR1, activated in every process it trains in.

The only package that imports EasyR1 (``verl``), Ray or vLLM; it imports no tool layer (the vLLM engine it drives is
:mod:`zoomzero_plugin.engine`'s). The generic host, bottom to top:

- the plugin system: ``hookspecs`` (what a plugin can add), ``errors`` → ``registry`` (loading the plugins) →
  ``state`` (the active host), ``post_import`` (callbacks when a module is imported);
- the seams' wrappers: ``reward_names``, ``reward_extras``, ``checks`` (config checks), ``generation`` (plugin
  rollouts), ``advantage``, ``batch_step``, ``sampling_seed``, ``loss_average``, ``lr_schedule``, ``metrics_file``;
  media: ``clips`` (clip specs), ``frame_refs``, ``video_refs``, ``video_layouts``, ``vllm_engine`` (what the
  rollout hands vLLM), ``dataset_videos`` (a Qwen3-VL row's video timed as the rollout times it); multi-turn
  batches: ``conversation`` (a conversation's ids and media) → ``multiturn`` (their assembly), ``sampler_check``
  (does vLLM sample from the policy the actor trains?);
- ``seams`` (every place the host touches EasyR1, as a list), and CPU mode: ``cpu_mode`` → ``cpu_seams``;
- ``recipe`` (building and checking a recipe) → ``activation`` → ``launcher`` (``easyr1 train``), ``doctor``,
  ``merge`` (checkpoint shards → a model folder), ``vllm_stub`` (a dry run without vLLM) → ``cli`` (``easyr1``).

zoomzero's own plugin is one wing on top, in :mod:`.zoomzero`, loaded through the ``easyr1.plugins`` entry point like
any third-party plugin. Plugin authors need :data:`hookimpl` and the types below; see :mod:`.hookspecs` for the hooks
and :mod:`.seams` for what is wrapped in EasyR1.
"""

from zoomzero_plugin.lazy import lazy_names

from .errors import PluginError, SeamError
from .hookspecs import AdvantageEstimator, Rollout, RolloutHook, hookimpl
from .reward_extras import add_reward_extras
from .state import current_host

# activation pulls in every seam (and torch): loaded on first use, so `easyr1 --help` and plugin imports stay fast.
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(("activate", "runtime_env", "setup_worker"), "activation"))


__all__ = [
    "AdvantageEstimator",
    "PluginError",
    "Rollout",
    "RolloutHook",
    "SeamError",
    "activate",
    "add_reward_extras",
    "current_host",
    "hookimpl",
    "runtime_env",
    "setup_worker",
]
