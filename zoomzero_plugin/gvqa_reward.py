"""Kept for one release, for recipes that name this file by path (``…/zoomzero_plugin/gvqa_reward.py``): the
grounded-QA reward is :mod:`zoomzero_plugin.gvqa.gvqa_reward`, which ``zoomzero:gvqa`` names."""

import warnings

from zoomzero_plugin.gvqa.gvqa_reward import REWARD_TYPE, compute_score

warnings.warn(
    "zoomzero_plugin/gvqa_reward.py moved to zoomzero_plugin/gvqa/gvqa_reward.py: name it "
    "worker.reward.reward_function: zoomzero:gvqa (the old path goes in the next release)",
    FutureWarning,
    stacklevel=2,
)

__all__ = ["REWARD_TYPE", "compute_score"]
