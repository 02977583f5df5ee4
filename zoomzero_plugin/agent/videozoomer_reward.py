"""VideoZoomer's trajectory reward with EasyR1's batch calling convention (``zoomzero:videozoomer``).

EasyR1 loads this file by path, calls ``compute_score(inputs, **worker.reward.reward_function_kwargs)`` with
dicts holding ``response`` (the decoded response: every assistant turn and observation after the prompt,
special tokens kept or skipped), ``response_length`` and ``ground_truth`` (a row's answer JSON, or a bare
letter), and expects one dict per response with ``overall``; the other keys (accuracy, format, tool, looked, grounding,
has_spans, turns, calls, evidence_calls, call_errors, clip_frames, answered) are logged as ``reward/<key>``.
``grounding`` and ``evidence_calls`` need the row's spans and duration: a bare letter as ground truth has neither,
so grounding falls back to the tool term (and no call is on the evidence).

kwargs: ``weights`` ``{"accuracy": 0.9, "format": 0.1, "tool": 0.0, "looked": 0.0}`` (any subset); ``agent``: the
rollout's section, whose budget keys are read as the rollout reads them (:meth:`AgentBudget.from_section`: its
``max_frames_per_call`` bounds a well-formed call; the other keys are the rollout's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zoomzero_plugin.agent.budget import AgentBudget
from zoomzero_plugin.agent.reward import AgentRewardConfig, read_truth, score_response

REWARD_TYPE = "batch"
SECTION = "reward_function_kwargs.agent"  # the recipe section of the budget, as errors name it


def compute_score(
    reward_inputs: Sequence[Mapping[str, Any]],
    weights: Mapping[str, float] | None = None,
    agent: Mapping[str, Any] | None = None,
    tokenadv: Mapping[str, Any] | None = None,  # read by the advantage step, not here
) -> list[dict[str, float]]:
    """Score a batch; see the module docstring for the convention."""
    config = AgentRewardConfig.from_kwargs(weights, AgentBudget.from_section(agent, SECTION))
    truths: dict[str, tuple] = {}  # the n responses to one prompt share its ground-truth string
    scores = []
    for i, item in enumerate(reward_inputs):
        try:
            letter, spans, duration = _truth(item["ground_truth"], truths)
        except (KeyError, ValueError) as e:
            raise ValueError(f"reward input {i}: unusable ground truth ({e})") from None
        scores.append(score_response(str(item.get("response") or ""), letter, config, spans, duration))
    return scores


def _truth(raw: Any, cache: dict[str, tuple]) -> tuple[str, tuple, float | None]:
    """:func:`~zoomzero_plugin.agent.reward.read_truth`, once per distinct ground-truth string."""
    if not isinstance(raw, str):
        return read_truth(raw)
    if raw not in cache:
        cache[raw] = read_truth(raw)
    return cache[raw]
