"""One trajectory's state machine: given a model turn, decide what happens next. Pure: no model, no decoding.

A :class:`Trajectory` starts with the overview (which frames of the video the first user turn shows). Each
:meth:`Trajectory.step` reads one assistant turn (:func:`.protocol.parse_turn`) and returns a :class:`Step`:

- a clip observation: the frames the call asked for (native frame indices and absolute times, labelled from 0)
  inside the observation text; the caller decodes them (:mod:`.frames`) and appends the observation;
- an error observation naming what was wrong (the call could not be read or run, a budget is used up); or
- the end: an answer, a turn with neither call nor answer, or a call in the last round (the authors' rollout
  stops there; the error is counted).

Frame times follow the authors' code exactly (REFERENCE: ``function_tools.extract_video_clip``,
``multimodal_dataset.process_video``): the overview keeps every ``max(1, round(native_fps / overview_fps))``-th
frame, or ``max_overview_frames`` frames by ``linspace(0, frames − 1)`` when that is more; a clip takes
``int(fps · (end − start))`` frames by ``linspace(int(start · native_fps), int(end · native_fps))`` with both ends
included, clamped to the video. A frame's time is its index / native fps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from ..question import VIDEO_PLACEHOLDER
from .budget import AgentBudget
from .prompts import DEFAULT_PROMPT, PromptSet, clip_label, frame_label, get_prompts
from .protocol import ANSWER, CALL, EXECUTION, Call, ToolError, Turn, parse_turn

# why a trajectory ended
END_ANSWER = "answer"  # the model answered
END_NO_ANSWER = "no_answer"  # a turn with neither a call nor an answer
END_LAST_ROUND_CALL = "last_round_call"  # a call where none may be made: dropped, no answer
END_TOTAL_TOKENS = "total_tokens"  # the response reached AgentBudget.max_response_tokens
ENDS = (END_ANSWER, END_NO_ANSWER, END_LAST_ROUND_CALL, END_TOTAL_TOKENS)


@dataclass(frozen=True)
class VideoInfo:
    """What the environment needs of a video: its path, frame count and average native frame rate (1/s)."""

    path: str
    frames: int
    fps: float

    def __post_init__(self) -> None:
        if self.frames < 1 or not (math.isfinite(self.fps) and self.fps > 0):
            raise ValueError(
                f"{self.path}: a video needs >= 1 frame and a positive frame rate, "
                f"got {self.frames} frames at {self.fps} fps"
            )

    @property
    def duration(self) -> float:
        """Seconds, as the decoder counts them (frames / fps)."""
        return self.frames / self.fps


@dataclass(frozen=True)
class Frame:
    """One image the model sees: its label index in its turn, absolute time (s) and native frame index."""

    index: int
    time: float
    frame: int

    @property
    def label(self) -> str:
        return frame_label(self.index, self.time)


def parts_text(parts: Sequence[str | Frame], image: str, video: str | None = None) -> str:
    """Text of a turn's parts, each frame as its label followed by ``image`` (an image placeholder); with ``video``
    (a video placeholder), each run of consecutive frames as one clip instead: its time range, then ``video``."""
    if video is None:
        return "".join(p if isinstance(p, str) else p.label + image for p in parts)
    out: list[str] = []
    run: list[Frame] = []
    for p in (*parts, ""):
        if isinstance(p, Frame):
            run.append(p)
            continue
        if run:
            out.append(clip_label(run[0].time, run[-1].time) + video)
            run = []
        out.append(p)
    return "".join(out)


def labelled(indices: Sequence[int], native_fps: float) -> tuple[Frame, ...]:
    return tuple(Frame(i, idx / native_fps, int(idx)) for i, idx in enumerate(indices))


def overview_indices(video: VideoInfo, budget: AgentBudget) -> list[int]:
    """Native frame indices of the overview (the authors' sampler; see the module docstring)."""
    step = max(1, round(video.fps / budget.overview_fps))
    indices = list(range(0, video.frames, step))
    if len(indices) > budget.max_overview_frames:
        indices = np.linspace(0, video.frames - 1, budget.max_overview_frames, dtype=int).tolist()
    return indices


@lru_cache(maxsize=1024)
def _overview(video: VideoInfo, budget: AgentBudget) -> tuple[Frame, ...]:
    """The labelled overview (immutable, so the n trajectories of one question share it)."""
    return labelled(overview_indices(video, budget), video.fps)


def clip_indices(call: Call, video: VideoInfo) -> list[int]:
    """Native frame indices a (valid) call asks for: ``call.frames`` of them, both segment ends included."""
    last, duration = video.frames - 1, video.duration
    # seconds clamped to the video before scaling: the same indices as the authors' clamp, no overflow
    start = max(0, min(int(min(max(call.start, 0.0), duration) * video.fps), last))
    end = max(start, min(int(min(max(call.end, 0.0), duration) * video.fps), last))
    return np.linspace(start, end, call.frames).astype(int).tolist()


@dataclass(frozen=True)
class Observation:
    """The user turn that answers a call: text and frames in order (``parts``), and what went wrong if anything."""

    parts: tuple[str | Frame, ...]
    error: ToolError | None = None
    last_round: bool = False  # it carries the "Do not call <video_zoom> in this round" note

    @property
    def frames(self) -> tuple[Frame, ...]:
        return tuple(p for p in self.parts if isinstance(p, Frame))

    def text(self, image: str = "<image>", video: str | None = None) -> str:
        """The turn as text, each frame as its label followed by ``image`` (a placeholder of your choice); with
        ``video``, the clip as one video instead (:func:`parts_text`)."""
        return parts_text(self.parts, image, video)


@dataclass(frozen=True)
class Step:
    """What one assistant turn led to: an observation to append, or the end (``end`` says why)."""

    turn: Turn
    observation: Observation | None = None
    error: ToolError | None = None  # the call's error (also inside the observation when there is one)
    end: str | None = None


@dataclass
class Trajectory:
    """One question's conversation with the tool. Call :meth:`step` with each assistant turn until ``done``."""

    video: VideoInfo
    budget: AgentBudget = field(default_factory=AgentBudget)
    prompts: PromptSet = field(default_factory=lambda: get_prompts(DEFAULT_PROMPT))

    def __post_init__(self) -> None:
        self.overview: tuple[Frame, ...] = _overview(self.video, self.budget)
        self.steps: list[Step] = []
        self.images = len(self.overview)  # images in the conversation so far
        self.calls = 0  # calls that returned frames
        self.errors = 0  # turns whose call returned an error (a call in the last round included)
        self.end: str | None = None
        self._first_prompt_tokens: int | None = None

    @property
    def done(self) -> bool:
        return self.end is not None

    @property
    def round(self) -> int:
        """Index (from 0) of the next assistant turn."""
        return len(self.steps)

    @property
    def clip_frames(self) -> int:
        """Frames returned by calls so far."""
        return self.images - len(self.overview)

    def user_parts(self, text: str) -> tuple[str | Frame, ...]:
        """The first user turn: ``text`` with its ``<video>`` replaced by the labelled overview frames (frames
        first when it has none)."""
        before, sep, after = text.partition(VIDEO_PLACEHOLDER)
        if not sep:
            before, after = "", text
        return tuple(p for p in (before, *self.overview, after) if not isinstance(p, str) or p)

    def tokens_left(self, prompt_tokens: int) -> int:
        """Response tokens left of ``max_response_tokens``, given the tokens of the whole prompt the next turn reads
        (image tokens included; the first call fixes the first prompt's length). ≤ 0: stop here."""
        if self._first_prompt_tokens is None:
            self._first_prompt_tokens = prompt_tokens
        return self.budget.max_response_tokens - (prompt_tokens - self._first_prompt_tokens)

    def max_new_tokens(self, prompt_tokens: int) -> int:
        """Tokens the next turn may generate: the turn budget or what is left of the total, the smaller."""
        return min(self.budget.max_new_tokens, self.tokens_left(prompt_tokens))

    def stop(self, reason: str) -> None:
        """End the trajectory from outside (e.g. reason ``total_tokens`` when :meth:`max_new_tokens` is ≤ 0)."""
        if reason not in ENDS:
            raise ValueError(f"unknown end reason {reason!r}; known: {ENDS}")
        if self.end is None:
            self.end = reason

    def withhold(self) -> None:
        """The host could not append the last step's observation (it would not fit ``max_response_tokens``): the
        trajectory ends there (``total_tokens``) and the observation no longer counts — its call is not in ``calls``
        and its frames not in ``clip_frames`` (an error text not in ``errors``), as the conversation never showed it."""
        step = self.steps[-1] if self.steps else None
        if self.done or step is None or step.observation is None:
            raise RuntimeError("withhold: the last step has no observation waiting to be shown")
        if step.observation.error is not None:
            self.errors -= 1
        else:
            self.calls -= 1
            self.images -= len(step.observation.frames)
        self.steps[-1] = replace(step, observation=None, end=END_TOTAL_TOKENS)
        self.end = END_TOTAL_TOKENS

    def step(self, text: object, cut: bool = False) -> Step:
        """Read the next assistant turn and decide what follows. Raises RuntimeError once ``done``.

        ``cut``: the turn was cut short by ``max_response_tokens``: it ends the trajectory (an answer it still holds
        counts; a call is not run)."""
        if self.done:
            raise RuntimeError(f"the trajectory has ended ({self.end}); no further turn is read")
        turn = parse_turn(text, self.budget.max_frames_per_call)
        last = self.round == self.budget.last_turn
        if cut and turn.kind != ANSWER:
            step = Step(turn, end=END_TOTAL_TOKENS)
        elif turn.kind != CALL:
            step = Step(turn, end=END_ANSWER if turn.kind == ANSWER else END_NO_ANSWER)
        elif last:
            self.errors += 1
            error = ToolError(
                "last_round_call",
                f"no call may be made in the last round (round {self.round + 1} "
                f"of {self.budget.max_assistant_turns}); the call was dropped",
            )
            step = Step(turn, error=error, end=END_LAST_ROUND_CALL)
        else:
            step = self._run(turn)
        self.steps.append(step)
        if step.end is not None:
            self.end = step.end
        return step

    def _run(self, turn: Turn) -> Step:
        error = turn.error or self._check(turn.call)  # type: ignore[arg-type]
        note = (self.prompts.last_round,) if self.round == self.budget.max_assistant_turns - 2 else ()
        if error is not None:
            self.errors += 1
            observation = Observation((self.prompts.error_text(error.kind, error.message), *note), error, bool(note))
            return Step(turn, observation, error)
        frames = labelled(clip_indices(turn.call, self.video), self.video.fps)  # type: ignore[arg-type]
        self.calls += 1
        self.images += len(frames)
        parts = (self.prompts.clip_open, *frames, self.prompts.clip_close, *note)
        return Step(turn, Observation(parts, None, bool(note)))

    def _check(self, call: Call) -> ToolError | None:
        """Checks against this video and this trajectory's budgets (the call's values are already sane)."""
        duration = self.video.duration
        if call.start >= duration or call.end <= 0:
            return ToolError(
                "outside_video",
                f"the segment [{call.start:g}, {call.end:g}] lies outside the video (0 to {duration:.2f} seconds)",
                EXECUTION,
            )
        if self.calls >= self.budget.max_calls:
            return ToolError(
                "call_budget", f"all {self.budget.max_calls} calls are used; answer with the frames above", EXECUTION
            )
        n = call.frames or 0
        if self.images + n > self.budget.max_images:
            left = self.budget.max_images - self.images
            return ToolError(
                "image_budget",
                f"the clip's {n} frames exceed the {left} frames left of the "
                f"{self.budget.max_images} a conversation may hold",
                EXECUTION,
            )
        return None
