"""The EasyR1 host: a plugin system for EasyR1, activated in every process it trains in.

The only package that imports EasyR1 (``verl``), Ray or vLLM. Plugin authors need :data:`hookimpl` and
the types below; see :mod:`.hookspecs` for the hooks and :mod:`.seams` for what is wrapped in EasyR1.
"""

from .activation import activate, runtime_env, setup_worker
from .hookspecs import AdvantageEstimator, RolloutHook, hookimpl
from .reward_extras import add_reward_extras

__all__ = ["AdvantageEstimator", "RolloutHook", "activate", "add_reward_extras", "hookimpl", "runtime_env", "setup_worker"]
