"""The ``<video_zoom>`` tool protocol: one assistant turn → a call, a final answer, or neither, with reasons.

A turn either calls the tool, ``<think>…</think><video_zoom>{"segment": [s, e], "fps": n}</video_zoom>``, or
ends the trajectory with ``<think>…</think><answer>X</answer>``. :func:`parse_turn` is total (any input gives a
:class:`Turn`, never an exception) and linear in the length of its input (``str.find``/``count`` scans and one
``json.loads``; no regular expression).

What is checked here needs no video: how a call reads (one JSON object with ``segment`` and ``fps``), its
values (finite, ``fps > 0``, ``end > start``, 1..``max_frames_per_call`` frames counted as ``int(fps · (end − start))``,
the authors' count) and the turn's format. Checks against the video and the trajectory's budgets (a segment
outside the video, calls or images used up, the last turn) belong to :mod:`.environment`.

Which calls run follows this package's rules (stricter than the release's; docs/fidelity.md). What the model
*reads* when a call cannot be read is the release's text: :func:`release_message` performs the operations the
authors' rollout performs on the same call content (``re.findall(r'\\{.*?\\}')``, ``json.loads``, the
one-object assertion, ``float(obj['segment'][0])`` …) and takes the exception's own text, so the observation
holds what their checkpoint was trained on. Only where the release reads a call that this package refuses
(prose around the object, a third segment value, ``true`` as a number …) are this package's words used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ..answers import ANSWER_CLOSE, ANSWER_OPEN, as_text, last_answer
from ..tags import block_ranges
from .budget import AgentBudget

CALL_TAG = "video_zoom"
CALL_OPEN, CALL_CLOSE = f"<{CALL_TAG}>", f"</{CALL_TAG}>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
STOP = CALL_CLOSE  # a turn ends at the first call's closing tag (the rollout's stop string, kept in the text)

# Error kinds: how the authors' rollout words the observation. "parse": the call could not be read (their
# "ERROR occurs during the function tool call" turn); "execution": it was read but could not run (their
# "Error: …" turn from the clip extractor).
PARSE, EXECUTION = "parse", "execution"


@dataclass(frozen=True)
class ToolError:
    """Why a call did not return frames. ``code`` is stable (statistics, tests); ``message`` is what the
    model reads in the error observation; ``note`` is this package's explanation when ``message`` is the
    release's text (which may be empty: the release shows ``Error Information: .`` for some calls)."""

    code: str
    message: str
    kind: str = EXECUTION  # PARSE | EXECUTION
    note: str | None = None

    @property
    def explanation(self) -> str:
        """For people (logs, demos): this package's words."""
        return self.note or self.message

    def to_dict(self) -> dict[str, str]:
        out = {"code": self.code, "message": self.message, "kind": self.kind}
        if self.note is not None:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Call:
    """A readable call: a segment of absolute seconds and a sampling rate (1/s)."""

    start: float
    end: float
    fps: float

    @property
    def frames(self) -> int | None:
        """``int(fps · (end − start))`` as the authors count frames (float arithmetic, truncated toward 0);
        None when it is not a finite number."""
        n = self.fps * (self.end - self.start)
        return int(n) if math.isfinite(n) else None

    def problem(self, max_frames: int) -> ToolError | None:
        """What makes these values unusable on any video, or None."""
        if not all(math.isfinite(x) for x in (self.start, self.end, self.fps)):
            return ToolError(
                "not_finite", f"the segment [{self.start}, {self.end}] and fps {self.fps} must be finite numbers"
            )
        if self.fps <= 0:
            return ToolError("fps_not_positive", f"fps must be greater than 0, got {self.fps:g}")
        if self.end <= self.start:
            return ToolError(
                "reversed_segment", f"the segment's end ({self.end:g}) must be after its start ({self.start:g})"
            )
        n = self.frames
        if n is None or n < 1:
            return ToolError(
                "no_frames",
                f"the segment [{self.start:g}, {self.end:g}] at fps {self.fps:g} gives {n} frames; ask for at least 1",
            )
        if n > max_frames:
            # the authors' extractor's own words
            return ToolError(
                "too_many_frames", f"Number of frames extracted ({n}) exceeds the maximum allowed ({max_frames})."
            )
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"segment": [self.start, self.end], "fps": self.fps, "frames": self.frames}


# turn kinds
CALL, ANSWER, NONE = "call", "answer", "none"


@dataclass(frozen=True)
class Turn:
    """One assistant turn, read.

    ``kind``: ``call`` (the turn holds ``</video_zoom>``), ``answer`` (no call; an ``<answer>…</answer>``), or
    ``none`` (neither: the trajectory ends unanswered). ``text`` is the turn cut after its first
    ``</video_zoom>``. For a call, ``call`` holds the values when they could be read, else ``error`` says why
    (``error`` also names values that can never run, such as a reversed segment). ``answer`` is the last
    ``<answer>`` content, stripped; ``letter`` the option letter it names. ``problems`` lists every format
    rule the turn breaks (empty: well formed).
    """

    kind: str
    text: str
    call: Call | None = None
    error: ToolError | None = None
    answer: str | None = None
    letter: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def format_ok(self) -> bool:
        return not self.problems and self.kind != NONE


def cut_turn(text: str) -> str:
    """``text`` up to and including its first ``</video_zoom>`` (what a rollout stopping there keeps)."""
    end = text.find(STOP)
    return text if end < 0 else text[: end + len(STOP)]


def call_char_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges ``[start, end)`` of every ``<video_zoom>…</video_zoom>`` in ``text``, tags included; an
    unterminated final ``<video_zoom>`` runs to the end of the text (:func:`~zoomzero_plugin.tags.block_ranges`,
    linear)."""
    return block_ranges(text, CALL_TAG)


def turn_call_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of the call in one sampled assistant turn, as :func:`parse_turn` reads the turn: the
    ``<video_zoom>…</video_zoom>`` block of a call turn, or the open ``<video_zoom>`` to the end of a turn cut
    inside its call; none in a turn read as an answer (``<video_zoom>`` left open before ``<answer>``). Which
    tokens of a turn are tool-call tokens (TokenAdv over turns)."""
    turn = cut_turn(text)
    if not turn.endswith(STOP) and (ANSWER_OPEN in turn or ANSWER_CLOSE in turn):
        return []
    return call_char_ranges(turn)


def _number(value: Any) -> float | None:
    """A JSON number or numeric string as float (inf for numbers too large); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if not str(value).strip().startswith("-") else -math.inf
    except ValueError:
        return None


def braced_spans(content: str) -> list[str]:
    """What the release's ``re.findall(r'\\{.*?\\}', content)`` returns, in linear time: from each ``{``, the text up
    to the next ``}`` when no newline comes first (``.`` does not match ``\n``), the scan going on after each
    match. A ``{`` whose line holds no later ``}`` starts no match, nor does any ``{`` before that newline."""
    out: list[str] = []
    n = len(content)
    start = content.find("{")
    close = newline = -1
    while 0 <= start < n:
        if close < start:
            close = content.find("}", start)
            if close < 0:
                return out
        if newline < start:
            newline = content.find("\n", start)
            if newline < 0:
                newline = n
        if newline < close:  # every "{" up to this newline meets it before a "}"
            start = content.find("{", newline + 1)
            continue
        out.append(content[start : close + 1])
        start = content.find("{", close + 1)
    return out


def _release_arguments(objects: list[Any]) -> None:
    """``prepare_tool_call_inputs_video`` of the release (``function_tools.py``), operation for operation."""
    if len(objects) != 1:
        raise AssertionError  # ``assert len(json_objects) == 1``: an exception without a message
    obj = objects[0]
    try:
        float(obj["segment"][0])
        float(obj["segment"][1])
        float(obj["fps"])
    except Exception as e:  # noqa: BLE001  (the release wraps whatever these operations raise)
        raise ValueError(f"Invalid input for function `extract_video_clip`. Error: {e}, input: {obj}") from None


def release_message(content: str) -> str | None:
    """The ``Error Information`` the authors' rollout (``vllm_async_engine.process_tool_call``) shows for a call
    whose content (the text between the first ``<video_zoom>`` and ``</video_zoom>``) is ``content``, or None
    when the release reads a call from it. The text is Python's own exception message from the same operations:
    ``json.loads`` of every ``{…}`` span, the one-object assertion (an empty message), ``float()`` of
    ``segment[0]``, ``segment[1]`` and ``fps`` (wrapped in the release's ``Invalid input …`` sentence). Linear
    in ``len(content)``; never raises."""
    try:
        objects = [json.loads(span) for span in braced_spans(content)]
        _release_arguments(objects)
    except Exception as e:  # noqa: BLE001  (the release catches every exception and shows its text)
        try:
            return str(e)
        except Exception:  # noqa: BLE001  (a text that cannot be built: the release would fail too)
            return type(e).__name__
    return None


def read_call(content: str) -> Call | ToolError:
    """The call in the text between ``<video_zoom>`` and ``</video_zoom>``: exactly one JSON object (any
    whitespace, pretty-printed too) with ``"segment": [start, end]`` and ``"fps"`` (numbers or numeric
    strings; other keys ignored)."""
    stripped = content.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return ToolError(
            "not_json", 'the call must hold exactly one JSON object such as {"segment": [4.0, 6.0], "fps": 2}', PARSE
        )
    try:
        obj = json.loads(stripped)
    except (ValueError, RecursionError) as e:
        detail = e.msg if isinstance(e, json.JSONDecodeError) else type(e).__name__
        return ToolError("not_json", f"the call is not valid JSON ({detail})", PARSE)
    if not isinstance(obj, dict):
        return ToolError("not_json", "the call must be one JSON object", PARSE)
    segment, fps = obj.get("segment"), obj.get("fps")
    if segment is None or fps is None:
        missing = [k for k in ("segment", "fps") if obj.get(k) is None]
        return ToolError("bad_arguments", f"the call lacks {' and '.join(repr(k) for k in missing)}", PARSE)
    if not isinstance(segment, list) or len(segment) != 2:
        return ToolError("bad_arguments", '"segment" must be a list of two numbers [start_sec, end_sec]', PARSE)
    values = [_number(segment[0]), _number(segment[1]), _number(fps)]
    if any(v is None for v in values):
        return ToolError("bad_arguments", '"segment" and "fps" must be numbers', PARSE)
    start, end, rate = values
    return Call(start, end, rate)  # type: ignore[arg-type]


def parse_turn(text: object, max_frames_per_call: int = AgentBudget.max_frames_per_call) -> Turn:
    """Read one assistant turn (never raises). ``max_frames_per_call`` is the per-call frame budget a well-formed
    call must respect. Text after the first ``</video_zoom>`` is dropped, as the rollout's stop string does."""
    text = cut_turn(as_text(text))
    if text.endswith(STOP):
        return _call_turn(text, max_frames_per_call)
    if ANSWER_CLOSE in text or ANSWER_OPEN in text:
        return _answer_turn(text)
    problems = ["unterminated_call"] if CALL_OPEN in text else ["no_call_or_answer"]
    return Turn(NONE, text, problems=tuple(problems))


def _think_problems(text: str, before: int) -> list[str]:
    """The turn (stripped) must open with ``<think>`` and close it before position ``before``."""
    lead = len(text) - len(text.lstrip())
    if not text.startswith(THINK_OPEN, lead):
        return ["no_think"]
    close = text.find(THINK_CLOSE, lead + len(THINK_OPEN))
    return [] if 0 <= close and close + len(THINK_CLOSE) <= before else ["think_not_closed"]


def _call_turn(text: str, max_frames: int) -> Turn:
    close = len(text) - len(CALL_CLOSE)
    opens = text.count(CALL_OPEN)
    first_open = text.find(CALL_OPEN)
    problems: list[str] = []
    if opens == 0:
        error: ToolError | None = ToolError("no_open_tag", "the call has </video_zoom> but no <video_zoom>", PARSE)
        call = None
        problems.append("call_tags")
    elif opens > 1:
        error, call = ToolError("several_calls", "one turn may hold one <video_zoom> call", PARSE), None
        problems.append("call_tags")
    else:
        read = read_call(text[first_open + len(CALL_OPEN) : close])
        call, error = (read, read.problem(max_frames)) if isinstance(read, Call) else (None, read)
    if error is not None and error.kind == PARSE and opens:
        error = _as_released(error, text[first_open + len(CALL_OPEN) : close])
    if error is not None:
        problems.append(f"call:{error.code}")
    problems += _think_problems(text, first_open if first_open >= 0 else close)
    if ANSWER_OPEN in text or ANSWER_CLOSE in text:
        problems.append("answer_in_call_turn")
    answer, letter = last_answer(text)
    return Turn(CALL, text, call=call, error=error, answer=answer, letter=letter, problems=tuple(problems))


def _as_released(error: ToolError, content: str) -> ToolError:
    """``error`` with the release's text for the same call content, where the release has one."""
    released = release_message(content)
    if released is None:  # the release runs this call: this package's words stay
        return error
    return ToolError(error.code, released, PARSE, note=error.message)


def _answer_turn(text: str) -> Turn:
    answer, letter = last_answer(text)
    problems: list[str] = []
    if text.count(ANSWER_OPEN) != 1 or text.count(ANSWER_CLOSE) != 1 or answer is None:
        problems.append("answer_tags")
    first_answer = text.find(ANSWER_OPEN)
    problems += _think_problems(text, first_answer if first_answer >= 0 else len(text))
    if not text.rstrip().endswith(ANSWER_CLOSE):
        problems.append("text_after_answer")
    if CALL_OPEN in text:
        problems.append("unterminated_call")
    return Turn(ANSWER, text, answer=answer, letter=letter, problems=tuple(problems))
