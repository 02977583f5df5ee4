"""Verifying a trajectory for SFT: replay its assistant turns through the agent environment, then judge it.

Replaying (not trusting a stored record) means one protocol decides everything: the observations, frame
times and error texts come out of :class:`~zoomzero_plugin.agent.Trajectory` exactly as the rollout and the
evaluation produce them, and a stored transcript whose observations differ from the replay (other budgets or
prompts) is caught. A trajectory is kept only when every turn is well formed, every call ran within the
budgets and the final answer is right. Reasons, in the order they are checked (the first one found counts):

  inconsistent    the stored observations differ from the replay, or turns follow the trajectory's end
  no_answer       a turn with neither a call nor an answer, or the trajectory ended without an answer
  broken_budget   a call over the per-call frames, the calls, the images, or a call in the last round
  malformed_turn  a turn breaks the format (no think, several calls, unreadable call JSON, text after the
                  answer, an answer inside a call turn …)
  bad_call        a well-formed call the tool refused for its values (outside the video, reversed, fps ≤ 0 …)
  wrong_answer    the answer is not the ground-truth letter
  too_few_calls   fewer successful calls than asked for (``min_calls``; 0 by default)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...agent import END_ANSWER, END_TOTAL_TOKENS, AgentBudget, Trajectory, VideoInfo, get_prompts
from ...agent.protocol import NONE, PARSE
from ...agent.transcript import IMAGE, Transcript

REASONS = ("inconsistent", "no_answer", "broken_budget", "malformed_turn", "bad_call", "wrong_answer", "too_few_calls")
BUDGET_ERRORS = frozenset({"too_many_frames", "call_budget", "image_budget", "last_round_call"})


@dataclass(frozen=True)
class Verdict:
    """``reason`` None: keep. ``trajectory`` is the replay (what an exporter renders)."""

    trajectory: Trajectory
    reason: str | None
    detail: str = ""

    @property
    def keep(self) -> bool:
        return self.reason is None


def replay(
    video: VideoInfo, turns: Sequence[str], budget: AgentBudget, prompt: str, cut_last: bool = False
) -> tuple[Trajectory, int]:
    """Step a fresh trajectory through ``turns``; returns it and how many turns it read before it ended.
    ``cut_last``: the last turn was cut short by the total token budget (as the rollout recorded it)."""
    traj = Trajectory(video, budget, get_prompts(prompt))
    read = 0
    for i, text in enumerate(turns):
        if traj.done:
            break
        traj.step(text, cut=cut_last and i == len(turns) - 1)
        read += 1
    return traj, read


def judge(traj: Trajectory, truth: str, min_calls: int = 0) -> tuple[str | None, str]:
    """(reason, detail) for a finished replay; (None, "") when it is fit for SFT."""
    for i, step in enumerate(traj.steps, 1):
        error, turn = step.error, step.turn
        if turn.kind == NONE:
            return "no_answer", f"turn {i}: neither a call nor an answer"
        if error is not None and error.code in BUDGET_ERRORS:
            return "broken_budget", f"turn {i}: {error.code}"
        other = [p for p in turn.problems if error is None or p != f"call:{error.code}"]
        if other or (error is not None and error.kind == PARSE):
            return "malformed_turn", f"turn {i}: {', '.join(other) or error.code}"  # type: ignore[union-attr]
        if error is not None:
            return "bad_call", f"turn {i}: {error.code}"
    if traj.end != END_ANSWER:
        return "no_answer", f"ended: {traj.end or 'unfinished'}"
    letter = traj.steps[-1].turn.letter
    if letter != truth:
        return "wrong_answer", f"answered {letter}, truth {truth}"
    if traj.calls < min_calls:
        return "too_few_calls", f"{traj.calls} successful calls, {min_calls} required"
    return None, ""


def verify_transcript(record: Transcript, truth: str, budget: AgentBudget, min_calls: int = 0) -> Verdict:
    """Replay a stored transcript (its own prompt variant) and judge it. Raises ValueError for a record whose
    video description is unusable."""
    traj, read = replay(
        record.video_info(),
        [t.text for t in record.turns],
        budget,
        record.prompt,
        cut_last=record.end == END_TOTAL_TOKENS,
    )
    if read < len(record.turns):
        return Verdict(traj, "inconsistent", f"{len(record.turns) - read} turn(s) after the end ({traj.end})")
    if record.end is not None and traj.end != record.end:
        return Verdict(traj, "inconsistent", f"the replay ends {traj.end or 'unfinished'}, the record {record.end}")
    for i, (step, stored) in enumerate(zip(traj.steps, record.turns), 1):
        replayed = step.observation.text(IMAGE) if step.observation is not None else None
        if stored.observation is not None and replayed != stored.observation:
            return Verdict(
                traj,
                "inconsistent",
                f"turn {i}: the stored observation differs from the replay (made with other budgets or prompts?)",
            )
    reason, detail = judge(traj, truth, min_calls)
    return Verdict(traj, reason, detail)
