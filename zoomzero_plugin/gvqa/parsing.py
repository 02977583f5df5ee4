"""Total parser for the Zoom-Zero response template.

``<think> … <time>(s, e)</time> … </think><answer>B</answer><glue>[(s1, e1), (s2, e2)]</glue>``

``parse_response`` accepts any input and never raises: what could not be read is reported in
``ParsedResponse.problems``. Seconds are absolute video time; spans are validated, clamped to the
duration (when known) and merged. Everything runs in time linear in the response's length (the scanning
primitives of :mod:`zoomzero_plugin.tags`); numbers are ASCII only and brackets of a pair must match.
Blocks read: the *last* complete ``<answer>`` and ``<glue>`` blocks, the *first* complete ``<think>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..answers import as_text, extract_letter
from ..spans import Span, clean_pairs
from ..tags import block_ranges, first_bounds, first_of, last_bounds, read_span_columns, skip_space, tagged_pairs

_THINK_STOPS = ("<think>", "</think>", "<answer>", "</answer>", "<glue>", "</glue>")


@dataclass(frozen=True)
class ParsedResponse:
    """What a response says, and what was wrong with it."""

    answer: str | None  # option letter, upper case
    spans: tuple[Span, ...]  # valid glue spans: clamped, merged, sorted
    think: str | None
    time_spans: tuple[Span, ...]  # spans cited inside <think> with <time>(s, e)</time>
    matches_template: bool  # the whole response has the template's shape
    glue_parsed: bool  # a <glue> block holds a well-formed list of (s, e) pairs
    invalid_spans: int  # pairs in that list that were rejected
    problems: tuple[str, ...]

    @property
    def format_ok(self) -> bool:
        """Format reward condition: template shape, a parsed glue list, ≥1 span, and no invalid span."""
        return self.matches_template and self.glue_parsed and bool(self.spans) and self.invalid_spans == 0


def parse_span_list(text: str, duration: float | None = None) -> tuple[list[Span], int, bool]:
    """Parse ``[(s, e), …]`` → (valid merged spans, number of invalid pairs, well-formed?)."""
    columns = read_span_columns(text)
    if columns is None:
        return [], 0, False
    spans, invalid = clean_pairs(*columns, duration)
    return spans, invalid, True


def matches_template(text: str) -> bool:
    """Whether the whole text is ``<think>…</think><answer>L</answer><glue>…</glue>`` (whitespace between
    the parts; the think text holds no think/answer/glue tag, the glue text no glue tag; L in A–Z)."""
    i = skip_space(text, 0)
    if not text.startswith("<think>", i):
        return False
    j, stop = first_of(text, _THINK_STOPS, i + len("<think>"))
    if stop != "</think>":
        return False
    i = skip_space(text, j + len("</think>"))
    if not text.startswith("<answer>", i):
        return False
    i = skip_space(text, i + len("<answer>"))
    if i >= len(text) or not "A" <= text[i] <= "Z":
        return False
    i = skip_space(text, i + 1)
    if not text.startswith("</answer>", i):
        return False
    i = skip_space(text, i + len("</answer>"))
    if not text.startswith("<glue>", i):
        return False
    j, stop = first_of(text, ("<glue>", "</glue>"), i + len("<glue>"))
    return stop == "</glue>" and skip_space(text, j + len("</glue>")) == len(text)


def parse_response(response: object, duration: float | None = None) -> ParsedResponse:
    """Parse one response. Never raises; ``duration`` (seconds) clamps spans when given. Linear time."""
    text = as_text(response)
    problems: list[str] = []

    # blocks as (start, content_start, content_end) indices: no Block objects on the hot path
    answer_at = last_bounds(text, "answer")
    answer = extract_letter(text[answer_at[1] : answer_at[2]]) if answer_at else None
    if answer_at is None:
        problems.append("no_answer")
    elif answer is None:
        problems.append("answer_not_a_letter")

    glue_at = last_bounds(text, "glue")
    spans: list[Span] = []
    invalid, parsed = 0, False
    if glue_at is None:
        problems.append("truncated_glue" if "<glue>" in text else "no_glue")
    else:
        spans, invalid, parsed = parse_span_list(text[glue_at[1] : glue_at[2]], duration)
        if not parsed:
            problems.append("glue_unparsable")
        elif invalid:
            problems.append(f"invalid_spans:{invalid}")
        elif not spans:
            problems.append("glue_empty")
        if text.find("<glue>") != glue_at[0]:  # the first block starts at the first "<glue>" (closed: glue is after it)
            problems.append("repeated_glue")

    think_at = first_bounds(text, "think")
    think = text[think_at[1] : think_at[2]] if think_at else None
    # a repeated citation adds nothing to the union (degenerate outputs repeat one)
    cited = tagged_pairs(think, "time", distinct=True) if think else []
    time_spans, _ = clean_pairs([s for s, _ in cited], [e for _, e in cited], duration)
    template = matches_template(text)
    if not template:
        problems.append("template_mismatch")
    return ParsedResponse(
        answer=answer,
        spans=tuple(spans),
        think=think,
        time_spans=tuple(time_spans),
        matches_template=template,
        glue_parsed=parsed,
        invalid_spans=invalid,
        problems=tuple(problems),
    )


def glue_spans(response: object, duration: float | None = None) -> tuple[Span, ...]:
    """``parse_response(response, duration).spans`` without parsing the rest of the response (for hot loops)."""
    text = as_text(response)
    glue = last_bounds(text, "glue")
    return tuple(parse_span_list(text[glue[1] : glue[2]], duration)[0]) if glue else ()


def glue_char_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges ``[start, end)`` of every ``<glue>…</glue>`` block, tags included.

    An unterminated final ``<glue>`` runs to the end of the text (a truncated response is still
    grounding text). Used to decide which generated tokens are grounding tokens.
    """
    return block_ranges(text, "glue")
