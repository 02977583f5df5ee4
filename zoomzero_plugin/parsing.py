"""Total parser for the Zoom-Zero response template.

``<think> … <time>(s, e)</time> … </think><answer>B</answer><glue>[(s1, e1), (s2, e2)]</glue>``

``parse_response`` accepts any input and never raises: what could not be read is reported in
``ParsedResponse.problems``. Seconds are absolute video time; spans are validated, clamped to the
duration (when known) and merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .spans import Span, clean_spans

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
_PAIR = rf"[\(\[]\s*({_NUM})\s*,\s*({_NUM})\s*[\)\]]"
_PAIR_NC = rf"[\(\[]\s*(?:{_NUM})\s*,\s*(?:{_NUM})\s*[\)\]]"
_SPAN_LIST = re.compile(rf"\s*\[\s*(?:{_PAIR_NC}(?:\s*,\s*{_PAIR_NC})*\s*,?)?\s*\]\s*")
_PAIR_RE = re.compile(_PAIR)
_TIME_RE = re.compile(rf"<time>\s*{_PAIR}\s*</time>")
_TEMPLATE = re.compile(
    r"\s*<think>((?:(?!</?think>|</?answer>|</?glue>).)*)</think>"
    r"\s*<answer>\s*([A-Z])\s*</answer>"
    r"\s*<glue>((?:(?!</?glue>).)*)</glue>\s*",
    re.DOTALL,
)
_ANSWER_RE = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_GLUE_RE = re.compile(r"<glue>(.*?)</glue>", re.DOTALL)
_LETTER_RE = re.compile(r"\s*\(?([A-Z])\)?(?:\s*$|[\s.:,])")
_THINK_RE = re.compile(r"<think>(.*?)</think>", re.DOTALL)


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
    if _SPAN_LIST.fullmatch(text) is None:
        return [], 0, False
    spans, problems = clean_spans(((a, b) for a, b in _PAIR_RE.findall(text)), duration)
    return spans, len(problems), True


def extract_letter(text: str) -> str | None:
    """The option letter an answer names: ``"B"``, ``"(B)"``, ``"B. green"``, ``"b"``; else None."""
    m = _LETTER_RE.match(text)
    if m:
        return m.group(1)
    stripped = text.strip().strip("()")
    return stripped.upper() if len(stripped) == 1 and stripped.isalpha() and stripped.isascii() else None


def as_text(response: object) -> str:
    """Any model output as text: bytes decoded (invalid UTF-8 replaced), None as empty, others by str()."""
    if isinstance(response, str):
        return response
    if isinstance(response, (bytes, bytearray)):
        return bytes(response).decode("utf-8", errors="replace")
    return "" if response is None else str(response)


def parse_response(response: object, duration: float | None = None) -> ParsedResponse:
    """Parse one response. Never raises; ``duration`` (seconds) clamps spans when given."""
    text = as_text(response)
    problems: list[str] = []
    template = _TEMPLATE.fullmatch(text)

    answers = _ANSWER_RE.findall(text)
    answer = extract_letter(answers[-1]) if answers else None
    if not answers:
        problems.append("no_answer")
    elif answer is None:
        problems.append("answer_not_a_letter")

    glues = _GLUE_RE.findall(text)
    spans: list[Span] = []
    invalid, parsed = 0, False
    if not glues:
        problems.append("truncated_glue" if "<glue>" in text else "no_glue")
    else:
        spans, invalid, parsed = parse_span_list(glues[-1], duration)
        if not parsed:
            problems.append("glue_unparsable")
        elif invalid:
            problems.append(f"invalid_spans:{invalid}")
        elif not spans:
            problems.append("glue_empty")
    if len(glues) > 1:
        problems.append("repeated_glue")

    thinks = _THINK_RE.findall(text)
    time_spans, _ = clean_spans(((a, b) for a, b in _TIME_RE.findall(thinks[0])) if thinks else (), duration)
    if template is None:
        problems.append("template_mismatch")
    return ParsedResponse(
        answer=answer,
        spans=tuple(spans),
        think=thinks[0] if thinks else None,
        time_spans=tuple(time_spans),
        matches_template=template is not None,
        glue_parsed=parsed,
        invalid_spans=invalid,
        problems=tuple(problems),
    )


def glue_spans(response: object, duration: float | None = None) -> tuple[Span, ...]:
    """``parse_response(response, duration).spans`` without parsing the rest of the response (for hot loops)."""
    glues = _GLUE_RE.findall(as_text(response))
    return tuple(parse_span_list(glues[-1], duration)[0]) if glues else ()


def glue_char_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges ``[start, end)`` of every ``<glue>…</glue>`` block, tags included.

    An unterminated final ``<glue>`` runs to the end of the text (a truncated response is still
    grounding text). Used to decide which generated tokens are grounding tokens.
    """
    ranges: list[tuple[int, int]] = []
    pos = 0
    while (start := text.find("<glue>", pos)) >= 0:
        close = text.find("</glue>", start + 6)
        end = len(text) if close < 0 else close + len("</glue>")
        ranges.append((start, end))
        pos = end
    return ranges


def answer_letter(response: object) -> str | None:
    """The option letter of an answer-only reply: the last ``<answer>…</answer>`` (its closing tag may be cut
    off by the token limit) read by :func:`extract_letter`, else the whole reply (``"B"``, ``"(B) green"``).

    What the fine pass is asked for is a bare letter, but a model trained on the grounding template often
    writes ``<answer>B</answer>``. Linear time (``str.rfind``/``str.find``); never raises.
    """
    text = as_text(response)
    start = text.rfind("<answer>")
    if start < 0:
        return extract_letter(text.strip())
    start += len("<answer>")
    end = text.find("</answer>", start)
    return extract_letter(text[start : end if end >= 0 else len(text)].strip())
