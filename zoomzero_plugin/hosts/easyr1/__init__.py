"""The EasyR1 host: a plugin system for EasyR1, activated in every process it trains in.

The only package that imports EasyR1 (``verl``), Ray or vLLM. The generic host is this package's modules,
bottom to top: ``hookspecs``, ``errors`` → ``registry`` → ``state`` (the active host) → the seams' wrappers
(``reward_names``, ``reward_extras``, ``checks``, ``generation`` (plugin rollouts), ``advantage``, ``batch_step``,
``clips``, ``frame_refs``, ``multiturn`` (multi-turn batches), ``loss_average``) → ``seams``,
``recipe`` → ``activation`` → ``launcher``, ``doctor`` → ``cli``. zoomzero's own plugin is one wing on top, in
:mod:`.zoomzero`, loaded through the ``easyr1.plugins`` entry point like any third-party plugin. Plugin authors need
:data:`hookimpl` and the types below; see :mod:`.hookspecs` for the hooks and :mod:`.seams` for what is
wrapped in EasyR1.
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
