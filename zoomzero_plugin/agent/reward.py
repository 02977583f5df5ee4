"""The VideoZoomer reward of one whole trajectory, from the response string an RL rollout decodes.

``overall = w_acc · accuracy + w_format · format + w_tool · tool + w_looked · looked`` (defaults 0.9, 0.1, 0, 0; the
authors' shipped configs pay no tool term), each component in {0, 1}:

- accuracy: the *final* turn is an answer turn and its ``<answer>`` names the right letter (``B``, ``(B)``,
  ``B. text`` or ``\\boxed{B}``, as the evaluation prompt asks);
- format: every non-final turn is one well-formed call (think, then exactly one ``<video_zoom>`` holding one
  JSON object with sane values and at most ``max_frames_per_call`` frames, no answer tags) and the final turn is
  think + exactly one answer, nothing after it but whitespace;
- tool: accuracy is 1 and at least one call returned frames (its observation shows the clip);
- looked: format is 1 and at least one call returned frames — a well-formed trajectory that looked before answering
  (not the authors': a reward on it alone is the credit-assignment check of the multi-turn loop, since a call's
  tokens come turns before the reward; format alone is also paid by a direct answer).

Also returned, for logs and for TokenAdv over turns: ``grounding`` — when the question has ground-truth spans, the
IoU of the union of the segments that calls returned frames for (clamped to the video) with the union of those
spans; otherwise the tool term — and ``has_spans`` (1 when it had spans), ``turns``, ``calls`` (calls that returned
frames), ``evidence_calls`` (those of them whose segment, clamped to the video, has IoU ≥ 0.5 with the union of the
spans: calls on the evidence), ``call_errors`` (error observations), ``clip_frames`` (frame labels in clip observations)
and ``answered``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..ground_truth import GroundTruth, truth_letter
from ..spans import Span, iou
from .budget import AgentBudget
from .prompts import CLIP_HEADER
from .protocol import ANSWER, CALL, parse_turn
from .render import ASSISTANT, split_response

COMPONENTS = ("accuracy", "format", "tool", "looked")
EVIDENCE_IOU = 0.5  # a call is on the evidence when its segment's IoU with the ground-truth spans is at least this
_WRAP = "<tool_response>"


@dataclass(frozen=True)
class AgentRewardConfig:
    """Weights of the components (finite, ≥ 0) and the per-call frame budget a well-formed call respects (the
    agent's budget's, :attr:`AgentBudget.max_frames_per_call`)."""

    accuracy: float = 0.9
    format: float = 0.1
    tool: float = 0.0
    looked: float = 0.0
    max_frames_per_call: int = AgentBudget.max_frames_per_call

    def __post_init__(self) -> None:
        for name in COMPONENTS:
            w = getattr(self, name)
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise ValueError(f"reward weight {name}={w!r} must be a finite number >= 0")
        frames = self.max_frames_per_call
        if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
            raise ValueError(f"max_frames_per_call must be an integer >= 1, got {frames!r}")

    @classmethod
    def from_kwargs(
        cls, weights: Mapping[str, float] | None = None, budget: AgentBudget = AgentBudget()
    ) -> AgentRewardConfig:
        """The weights of ``reward_function_kwargs.weights`` (any subset) under ``budget``."""
        weights = dict(weights or {})
        unknown = sorted(set(weights) - set(COMPONENTS))
        if unknown:
            raise ValueError(f"unknown reward weight(s) {unknown}; known: {list(COMPONENTS)}")
        return cls(**{k: float(v) for k, v in weights.items()}, max_frames_per_call=budget.max_frames_per_call)


def read_truth(raw: Any) -> tuple[str, tuple[Span, ...], float | None]:
    """(answer letter, ground-truth spans, duration in seconds) of a row's answer: its answer JSON (or mapping),
    or a bare letter A–Z, ``B.`` as the authors' data writes it (no spans, no duration). ValueError naming the
    fault."""
    letter = truth_letter(raw) if isinstance(raw, str) else None
    if letter is not None:
        return letter, (), None
    parsed = GroundTruth.parse(raw)
    return parsed.answer, parsed.spans, parsed.duration


def clip_frames_shown(observation: str) -> int:
    """Frames a clip observation shows (0 for an error observation): frame labels after the clip header."""
    body = observation.lstrip()
    if body.startswith(_WRAP):
        body = body[len(_WRAP) :].lstrip("\n")
    if not body.startswith(CLIP_HEADER):
        return 0
    return body.count("<frame")


def score_turns(
    assistant: Sequence[str],
    observations: Sequence[str],
    truth: str,
    config: AgentRewardConfig = AgentRewardConfig(),
    spans: Sequence[Span] = (),
    duration: float | None = None,
) -> dict[str, float]:
    """Score a trajectory given its assistant turns and the observations that followed them (one fewer, or as
    many when the response was cut inside an observation); ``truth`` is the answer letter, ``spans`` the
    question's ground-truth spans (seconds; may be empty) and ``duration`` the video's length in seconds."""
    turns = [parse_turn(t, config.max_frames_per_call) for t in assistant]
    final = turns[-1] if turns else None
    accuracy = float(final is not None and final.kind == ANSWER and final.letter is not None and final.letter == truth)
    fmt = float(
        final is not None
        and final.kind == ANSWER
        and final.format_ok
        and all(t.kind == CALL and t.format_ok for t in turns[:-1])
    )
    shown = [clip_frames_shown(o) for o in observations]
    calls = sum(1 for n in shown if n > 0)
    tool = float(accuracy == 1.0 and calls > 0)
    looked = float(fmt == 1.0 and calls > 0)
    seen = [(t.call.start, t.call.end) for t, n in zip(turns, shown) if n > 0 and t.call is not None]
    grounding = iou(_clamped(seen, duration), spans) if spans else tool
    on_evidence = sum(1 for seg in seen if spans and iou(_clamped([seg], duration), spans) >= EVIDENCE_IOU)
    overall = config.accuracy * accuracy + config.format * fmt + config.tool * tool + config.looked * looked
    return {
        "overall": overall,
        "accuracy": accuracy,
        "format": fmt,
        "tool": tool,
        "looked": looked,
        "grounding": grounding,
        "has_spans": float(bool(spans)),
        "turns": float(len(turns)),
        "calls": float(calls),
        "evidence_calls": float(on_evidence),
        "call_errors": float(len(shown) - calls),
        "clip_frames": float(sum(shown)),
        "answered": float(final is not None and final.kind == ANSWER and final.letter is not None),
    }


def _clamped(segments: Sequence[Span], duration: float | None) -> list[Span]:
    hi = math.inf if duration is None else duration
    return [(max(s, 0.0), min(e, hi)) for s, e in segments if min(e, hi) > max(s, 0.0)]


def score_response(
    response: str,
    truth: str,
    config: AgentRewardConfig = AgentRewardConfig(),
    spans: Sequence[Span] = (),
    duration: float | None = None,
) -> dict[str, float]:
    """Score one response string (everything after the first prompt; special tokens kept or skipped)."""
    segments = split_response(response)
    assistant = [s.text for s in segments if s.role == ASSISTANT]
    observations = [s.text for s in segments if s.role != ASSISTANT]
    return score_turns(assistant, observations, truth, config, spans, duration)
