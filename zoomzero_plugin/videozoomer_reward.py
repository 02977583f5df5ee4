"""Kept for one release, for recipes that name this file by path (``…/zoomzero_plugin/videozoomer_reward.py``): the
VideoZoomer reward is :mod:`zoomzero_plugin.agent.videozoomer_reward`, which ``zoomzero:videozoomer`` names."""

import warnings

from zoomzero_plugin.agent.videozoomer_reward import REWARD_TYPE, compute_score

warnings.warn(
    "zoomzero_plugin/videozoomer_reward.py moved to zoomzero_plugin/agent/videozoomer_reward.py: name it "
    "worker.reward.reward_function: zoomzero:videozoomer (the old path goes in the next release)",
    FutureWarning,
    stacklevel=2,
)

__all__ = ["REWARD_TYPE", "compute_score"]
