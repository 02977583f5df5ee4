"""One model pass over a zoom plan: build the requests, run them as one batch, read the responses.

A *grounding* pass asks for the template (answer letter + ``<glue>`` spans); an *answer* pass asks only
for the option letter (scored over the option letters, or generated freely). Every pass returns a
:class:`PassResult` whose ``record()`` is deterministic (what was planned, decoded and answered) and
whose ``timing()`` holds the wall-clock seconds, kept apart so predictions files compare byte for byte.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..answers import REPLY, Found, LetterRule, read_letter
from ..errors import VideoError
from ..ground_truth import LETTERS, GroundTruth
from ..gvqa.parsing import parse_response
from ..gvqa.prompts import DEFAULT_PROMPT_STYLE, grounding_prompt, zoom_prompt
from ..gvqa.zoom import ZoomPlan
from ..rows import bad_rows, row_problem, row_truth
from ..spans import Span, clean_spans
from ..video import check_video_file
from .backend import Backend, Generation, Output, Request, SamplingParams


@dataclass(frozen=True)
class Question:
    """What the modes need from one dataset row."""

    qid: str
    video: str
    question: str
    options: tuple[str, ...]
    duration: float
    prompt: str = ""  # the coarse-pass prompt (the row's own); built from the question when empty
    truth: GroundTruth | None = field(default=None, compare=False, repr=False)  # the row's, when read from one
    letter_rule: LetterRule = field(default=REPLY, compare=False, repr=False)  # how a reply's letter is read (the
    # benchmark's: ``zoomzero eval`` sets it)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Question:
        truth = row_truth(row)
        videos = row.get("videos") or []
        if not isinstance(videos, (list, tuple)) or len(videos) != 1:
            raise ValueError(f"expected one video, got {videos!r}")
        return cls(
            truth.qid, str(videos[0]), truth.question, truth.options, truth.duration, str(row.get("prompt", "")), truth
        )

    @classmethod
    def from_rows(
        cls, rows: Sequence[dict[str, Any]], source: str = "the data", videos: bool = True, show: int = 3
    ) -> list[Question]:
        """Every row as a Question, or one DataError naming the bad rows (row number and qid) and why.

        Checked: the answer column parses (letter among the options, valid spans, positive duration), one
        video per row, question ids unique, and with ``videos`` each local video file exists and is not
        empty. Cheap (no decoding): for before a model is loaded.
        """
        questions, problems, first = [], [], {}
        for number, row in enumerate(rows, 1):
            try:
                if not isinstance(row, dict):
                    raise ValueError(f"a {type(row).__name__}, not an object")
                q = cls.from_row(row)
            except (ValueError, KeyError, TypeError) as e:
                problems.append(row_problem(number, row, e))
                continue
            if q.qid in first:
                problems.append(f"row {number}: question id {q.qid!r} repeats row {first[q.qid]}")
            first.setdefault(q.qid, number)
            if videos:
                try:
                    check_video_file(q.video)
                except VideoError as e:
                    problems.append(f"row {number} ({q.qid}): {e}")
            questions.append(q)
        if problems:
            raise bad_rows(source, problems, show)
        return questions

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(LETTERS[: len(self.options)])

    def read_answer(self, text: str) -> Found | None:
        """The option letter a reply to this question names, and where (see ``letter_rule``)."""
        return read_letter(text, self.letters, self.letter_rule)

    def coarse_prompt(self, style: str = DEFAULT_PROMPT_STYLE) -> str:
        """The row's own prompt; a prompt of ``style`` when the row has none."""
        return self.prompt or grounding_prompt(self.question, self.options, self.duration, style=style)


def answer_confidence(output: Output, found: Found | None = None) -> float | None:
    """Probability of the token carrying the answer letter: ``found`` (the letter and its index in the text), by
    default the letter the template names (in ``<answer>`` or a bare-letter reply)."""
    if output.choice_logprobs:
        return math.exp(max(output.choice_logprobs.values()))
    if output.token_logprobs is None or output.token_offsets is None:
        return None
    found = found or read_letter(output.text)
    if found is None:
        return None
    pos = found[1]
    k = bisect_right(output.token_offsets, pos) - 1  # the token whose characters hold pos
    if 0 <= k < len(output.token_logprobs) and pos < output.token_offsets[k + 1]:
        return math.exp(output.token_logprobs[k])
    return None


@dataclass
class PassResult:
    """A pass's reading of one question. ``spans`` are absolute seconds, clean and merged."""

    name: str
    plan: ZoomPlan
    generation: Generation
    answer: str | None
    spans: list[Span] = field(default_factory=list)
    confidence: float | None = None

    def record(self) -> dict[str, Any]:
        g = self.generation
        return {
            "pass": self.name,
            "clips": [[round(c.start, 3), round(c.end, 3), c.nframes] for c in self.plan.clips],
            "frame_pixels": self.plan.frame_pixels,
            "frames": g.frames,
            "video_tokens": g.video_tokens,
            "decoded": [c.to_list() for c in g.clips],
            "texts": [o.text for o in g.outputs],
            "answer": self.answer,
            "spans": [[round(s, 3), round(e, 3)] for s, e in self.spans],
            "confidence": None if self.confidence is None else round(self.confidence, 6),
        }

    def timing(self) -> dict[str, Any]:
        return {"pass": self.name, **{k: round(v, 6) for k, v in self.generation.timing.items()}}


def _result(name: str, q: Question, plan: ZoomPlan, gen: Generation, spans: list[Span] | None = None) -> PassResult:
    """A pass's reading of one reply: its letter by the question's rule, the confidence of that letter's token."""
    found = q.read_answer(gen.text)
    confidence = answer_confidence(gen.outputs[0], found) if found else None
    return PassResult(name, plan, gen, found[0] if found else None, spans or [], confidence)


def grounding_pass(
    backend: Backend,
    items: Sequence[tuple[Question, ZoomPlan, str]],
    params: SamplingParams,
    name: str,
    shift: Sequence[float] | None = None,
    parse_duration: Sequence[float] | None = None,
) -> list[PassResult]:
    """Ask each ``(question, plan, prompt)`` for answer + spans, as one batch of requests.

    Spans are parsed against ``parse_duration`` (default: the video's) and shifted by ``shift`` seconds
    (a window presented from 0 reports window-relative times).
    """
    requests = [Request(prompt, tuple(plan.video_elements(q.video))) for q, plan, prompt in items]
    gens = backend.generate(requests, params) if requests else []
    results = []
    for i, ((q, plan, _), gen) in enumerate(zip(items, gens)):
        offset = shift[i] if shift else 0.0
        parsed = parse_response(gen.text, parse_duration[i] if parse_duration else q.duration)
        spans, _ = clean_spans([(s + offset, e + offset) for s, e in parsed.spans], q.duration)
        results.append(_result(name, q, plan, gen, spans))
    return results


def answer_pass(
    backend: Backend,
    items: Sequence[tuple[Question, ZoomPlan]],
    name: str,
    score_letters: bool = True,
    max_new_tokens: int = 8,
    style: str = DEFAULT_PROMPT_STYLE,
) -> list[PassResult]:
    """Ask each question for its option letter only (the zoom prompt of ``style``), as one batch.

    ``score_letters``: the most probable option letter at the first position (the authors' zoom judge);
    otherwise a short greedy generation read by the question's letter rule (a bare letter, ``<answer>B</answer>``
    or a sentence).
    """
    requests = [
        Request(
            zoom_prompt(q.question, q.options, style=style),
            tuple(plan.video_elements(q.video)),
            choices=q.letters if score_letters else (),
        )
        for q, plan in items
    ]
    gens = backend.generate(requests, SamplingParams(max_new_tokens=max_new_tokens, logprobs=True)) if requests else []
    return [_result(name, q, plan, gen) for (q, plan), gen in zip(items, gens)]
