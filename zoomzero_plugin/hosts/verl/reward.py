"""The two methods' rewards as verl reward managers: ``zoomzero`` (grounded video QA) and ``videozoomer``.

verl's reward loop hands a manager one trajectory (its response ids, the row's fields, and the agent loop's
``extra_fields`` as ``tool_extra_fields``); the manager returns the score verl places on the last response token and
``reward_extra_info``, which verl keeps per trajectory. Here the score is the package's ``overall`` and the extra info
every component (``format``, ``iou``, ``accuracy``, ``zoom``… or ``accuracy``, ``format``, ``tool``, ``grounding``…),
which the TokenAdv trainer (:mod:`.trainer`) reads back. The response is decoded as EasyR1's reward manager decodes it
(its valid tokens, special tokens skipped), and scored by the same functions the EasyR1 host's reward files call
(:func:`zoomzero_plugin.gvqa.reward.score_response`, :func:`zoomzero_plugin.agent.reward.score_response`), so both hosts
give one response one reward.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.experimental.reward_loop.reward_manager.registry import register

from zoomzero_plugin.agent import reward as agent_reward
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa import reward as gvqa_reward

from .options import recipe_options
from .rows import ZOOM_ANSWER

GVQA, VIDEOZOOMER = "zoomzero", "videozoomer"


def response_text(tokenizer: Any, data: Any) -> tuple[str, Any, Mapping[str, Any]]:
    """(decoded response, the row's ground truth, the agent loop's extra fields) of the trajectory in ``data``."""
    item = data[-1]
    ids = item.batch["responses"]
    valid = int(item.batch["attention_mask"][-ids.shape[-1] :].sum())
    text = tokenizer.decode(ids[:valid].tolist(), skip_special_tokens=True)
    reward_model = item.non_tensor_batch.get("reward_model") or {}
    if "ground_truth" not in reward_model:
        raise ValueError("a zoomzero row needs reward_model.ground_truth (its answer JSON)")
    extras = item.non_tensor_batch.get("tool_extra_fields") or {}
    return text, reward_model["ground_truth"], extras


def gvqa_scores(text: str, truth: Any, extras: Mapping[str, Any], options: Any) -> dict[str, float]:
    """The GVQA components and ``overall`` of one response (``zoom`` from the zoom pass's answer)."""
    zoom = options.zoom_pass and "zoom" in options.reward.components
    if zoom and ZOOM_ANSWER not in extras:
        raise RuntimeError(
            "zoomzero.zoom enables the zoom pass but the trajectory carries no zoom_answer: the rows were not rolled "
            "out by the zoomzero agent loop (set actor_rollout_ref.rollout.agent.default_agent_loop: zoomzero)"
        )
    truth = GroundTruth.parse(truth)
    return gvqa_reward.score_response(text, truth, options.reward.config, zoom_answer=extras.get(ZOOM_ANSWER))


def videozoomer_scores(text: str, truth: Any, options: Any) -> dict[str, float]:
    """The VideoZoomer components and ``overall`` of one trajectory (every turn, observations included)."""
    letter, spans, duration = agent_reward.read_truth(truth)
    return agent_reward.score_response(text, letter, options.reward.config, spans, duration)


class _Manager(RewardManagerBase):
    def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None, reward_model_tokenizer=None):
        super().__init__(config, tokenizer, compute_score)
        self.options = recipe_options(config).checked()

    def scores(self, text: str, truth: Any, extras: Mapping[str, Any]) -> dict[str, float]:
        raise NotImplementedError

    async def run_single(self, data: Any) -> dict[str, Any]:
        text, truth, extras = response_text(self.tokenizer, data)
        scores = await self.loop.run_in_executor(None, lambda: self.scores(text, truth, extras))
        return {"reward_score": float(scores["overall"]), "reward_extra_info": {k: float(v) for k, v in scores.items()}}


@register(GVQA)
class GvqaRewardManager(_Manager):
    """``reward.reward_manager.name: zoomzero``: format, IoU, accuracy and the zoom reward (Zoom-Zero)."""

    def scores(self, text: str, truth: Any, extras: Mapping[str, Any]) -> dict[str, float]:
        return gvqa_scores(text, truth, extras, self.options)


@register(VIDEOZOOMER)
class VideoZoomerRewardManager(_Manager):
    """``reward.reward_manager.name: videozoomer``: accuracy, format and the tool bonus over the whole trajectory."""

    def scores(self, text: str, truth: Any, extras: Mapping[str, Any]) -> dict[str, float]:
        return videozoomer_scores(text, truth, self.options)
