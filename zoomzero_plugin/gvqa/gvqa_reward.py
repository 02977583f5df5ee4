"""Grounded video QA reward with EasyR1's batch calling convention.

EasyR1 loads this file by path (``worker.reward.reward_function: zoomzero:gvqa`` names it: ``…/gvqa/gvqa_reward.py``),
calls ``compute_score(inputs, **worker.reward.reward_function_kwargs)`` with dicts holding
``response``, ``response_length`` and ``ground_truth`` (the JSON string of the row's answer column),
and expects one dict per response with ``overall``; every other key is logged as ``reward/<key>``.

The zoom rollout hook adds ``zoom_answer`` (the fine pass's letter) to each input; without it the zoom
component is 0. When ``zoom`` enables the zoom pass and ``zoom``
is a component, every input must carry ``zoom_answer`` (None when the pass had no spans to look at):
a batch without it means the hook never ran, and scoring zoom as 0 would silently train without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.reward import RewardConfig, score_response

REWARD_TYPE = "batch"


def compute_score(
    reward_inputs: Sequence[Mapping[str, Any]],
    components: Sequence[str] | str | None = None,
    weights: Mapping[str, float] | None = None,
    normalize: bool = True,
    zoom: Mapping[str, Any] | None = None,  # read by the rollout hook, not here
    tokenadv: Mapping[str, Any] | None = None,  # read by the advantage step, not here
) -> list[dict[str, float]]:
    """Score a batch; see the module docstring for the convention."""
    config = RewardConfig.from_kwargs(components, weights, normalize)
    zoom_pass = isinstance(zoom, Mapping) and bool(zoom.get("enable", True))
    if zoom_pass and "zoom" in config.components and any("zoom_answer" not in item for item in reward_inputs):
        raise RuntimeError(
            "reward_function_kwargs.zoom enables the zoom pass but the reward inputs carry no 'zoom_answer': the "
            "zoom rollout hook did not run (is the easyr1 plugin host active? `easyr1 doctor`)"
        )
    scores = []
    truths: dict[str, GroundTruth] = {}  # the n responses to one prompt share its ground-truth string
    for i, item in enumerate(reward_inputs):
        try:
            truth = _truth(item["ground_truth"], truths)
        except (KeyError, ValueError) as e:
            raise ValueError(f"reward input {i}: unusable ground truth ({e})") from None
        scores.append(score_response(item.get("response", ""), truth, config, zoom_answer=item.get("zoom_answer")))
    return scores


def _truth(raw: Any, cache: dict[str, GroundTruth]) -> GroundTruth:
    if not isinstance(raw, str):
        return GroundTruth.parse(raw)
    if raw not in cache:
        cache[raw] = GroundTruth.parse(raw)
    return cache[raw]
