"""Reading the option letter a reply names: one reader, :func:`read_letter`, whose variants are a :class:`LetterRule`.

A rule says where the answer is (the last ``<answer>`` block, its closing tag perhaps cut off, else the whole reply;
or only a closed block), whether ``\\boxed{B}`` names it, which phrases are removed first, how the letter is found
(:data:`FINDERS`) and among which letters. The named rules:

- :data:`TEMPLATE` — this package's template, as its training readers have always read it (Zoom-Zero's zoom pass,
  :func:`answer_letter`): the letter that opens the block (``B``, ``(B)``, ``B. red``, a bare ``b``).
- :data:`REPLY` — the package's reading of any reply (``zoomzero eval`` and ``zoomzero score`` where a benchmark has
  no reply reader of its own): the block, ``\\boxed{B}``, the letter after the last answer phrase ("The answer is
  C", "answer: (c)"), a letter opening the reply set apart (``B.``, ``(B)``, ``b.`` too), else the only option letter
  standing alone ("I think it's B" → B: ``I`` is not an option). Only the question's own letters count.
- :data:`VIDEOMME`, :data:`LONGVIDEOBENCH`, :data:`MLVU`, :data:`LVBENCH`, :data:`CGBENCH` — the benchmarks'
  reply readers (``eval_your_results.py``, lmms-eval's LongVideoBench task, lmms-eval 0.7.3's MLVU task
  (``extract_mcq_answer``: MLVU's own ``choice_bench.py`` reads a reply to its ``Best option: (`` pre-fill, a prompt
  this package never writes), ``polish_answer``, ``post_process``), quoted in docs/metrics.md with the reply shapes
  each reads; ``eval.metrics`` names each benchmark's rule.

Every reader accepts any input, never raises and runs in time linear in the text's length (``str.find``/``rfind``
scans, one pass per removed phrase, regular expressions of single anchored tokens).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .tags import letter_at

ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"
ALL_LETTERS = string.ascii_uppercase
Found = tuple[str, int]  # a letter and its index in the reply


@dataclass(frozen=True)
class LetterRule:
    """One variant of the reader. ``find`` names a finder of :data:`FINDERS`; ``name`` says whose rule it is."""

    name: str = "this package's template"
    block: str = "last"  # last: the last <answer> block (close optional), else the whole reply | closed: the last
    # closed block, else nothing | none: the whole reply, tags and all
    find: str = "lead"  # how the letter is found in the block (or the reply)
    unblocked: str = ""  # the finder for a reply without a block ("": ``find``)
    boxed: bool = False  # ``\boxed{B}`` names the letter (any backslashes and braces)
    phrases: tuple[str, ...] = ()  # removed first, in order, case-sensitive (str.replace), as an official script does
    letters: str = ""  # the benchmark's own letter set, whatever the question's options; "": the question's
    dotted: bool = False  # a lone lower-case letter may carry a period ("b.", not only "b")


def as_text(response: object) -> str:
    """Any model output as text: bytes decoded (invalid UTF-8 replaced), None as empty, others by str()."""
    if isinstance(response, str):
        return response
    if isinstance(response, (bytes, bytearray)):
        return bytes(response).decode("utf-8", errors="replace")
    return "" if response is None else str(response)


# --- finders: (text, start, end, rule, letters) -> the letter and its index, or None ---------------------------------

Finder = Callable[[str, int, int, LetterRule, str], "Found | None"]


def _lone(text: str, start: int, end: int, dotted: bool) -> Found | None:
    """``text[start:end]`` as one ASCII letter alone (any case), in parentheses or not, with a period if ``dotted``."""
    content = text[start:end]
    stripped = content.strip()
    if dotted and stripped.endswith("."):
        stripped = stripped[:-1].rstrip()
    stripped = stripped.strip("()")
    if len(stripped) == 1 and stripped.isalpha() and stripped.isascii():
        return stripped.upper(), start + content.index(stripped)
    return None


def _lead(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """The letter that opens the text (``B``, ``(B)``, ``B. red``, ``B: red``), or the text is one letter alone."""
    found = letter_at(text[start:end])
    if found:
        return found[0], start + found[1]
    return _lone(text, start, end, rule.dotted)


def _marked(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """A capital that opens the text set apart: ``B``, ``(B) text``, ``B. text``, ``B: text``, ``B, text``,
    ``B) text`` (not ``A man …`` nor ``I think …``)."""
    reply = text[start:end]
    at = start + len(reply) - len(reply.lstrip())
    reply = reply.strip()
    if reply[:1] == "(" and reply[2:3] == ")" and "A" <= reply[1:2] <= "Z":
        return reply[1], at + 1
    if reply[:1] and "A" <= reply[0] <= "Z" and (len(reply) == 1 or reply[1] in ".:,)"):
        return reply[0], at
    return None


_PHRASES = (
    "answer is",
    "answer:",
    "answer would be",
    "option is",
    "option:",
    "choice is",
    "choice:",
    "i choose",
    "i pick",
    "i select",
    "i'd choose",
    "i would choose",
)
_STANDALONE = re.compile(r"\b[A-Z]\b")


def _reply(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """The package's reading of a free reply: the letter after the last answer phrase (any case), a letter opening
    the reply set apart (``B``, ``(B) red``, ``B. red``; ``b``, ``b.`` alone), else the only option letter standing
    alone as a word (repeats allowed: ``"I think it's B"``, ``"B red"``; ``"A or C"`` names none)."""
    lowered = text[start:end].lower()
    after = max((at + len(p) for p in _PHRASES if (at := lowered.rfind(p)) >= 0), default=-1)
    for found in (
        _lead(text, start + after, end, rule, letters) if after >= 0 else None,
        _marked(text, start, end, rule, letters) or _lone(text, start, end, rule.dotted),
    ):
        if found and found[0] in letters:
            return found
    seen: Found | None = None
    for match in _STANDALONE.finditer(text, start, end):
        if match[0] in letters:
            if seen and seen[0] != match[0]:
                return None  # two options named: no single answer
            seen = seen or (match[0], match.start())
    return seen


def _first(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """The first capital among ``letters`` anywhere, after the rule's phrases are removed (Video-MME,
    LongVideoBench)."""
    kept, where = _without(text[start:end], rule.phrases)
    at = min((i for i in map(kept.find, letters) if i >= 0), default=-1)
    return (kept[at], start + where(at)) if at >= 0 else None


# lmms-eval 0.7.3 tasks/_task_utils/mcq_extract.py, the reader of its MLVU task (and of its Video-MME, LVBench): the
# punctuation stripped from both ends in this order, the answer phrases (English, Korean, Chinese, Japanese) and
# the priority of each shape, verbatim
_MCQ_STRIPPED = (",", ".", "!", "?", ";", ":", "'", '"')
_MCQ_PHRASES = (
    "the answer is",
    "answer is",
    "the correct answer is",
    "correct answer is",
    "the best answer is",
    "best answer is",
    "the correct option is",
    "correct option is",
    "the best option is",
    "best option is",
    "the choice is",
    "choice is",
    "the correct choice is",
    "correct choice is",
    "i choose",
    "i select",
    "i pick",
    "my answer is",
    "my choice is",
    "옵션",
    "정답은",
    "답은",
    "답:",
    "答案是",
    "答案为",
    "选",
    "答えは",
)
# (priority, the pattern around the letter, the letter's offset in it): (B), B., B:, B), "B "; the other shapes'
# priorities: opening the reply 10, ending it 9, after a phrase 7, anywhere (only when nothing else is found) 0
_MCQ_SHAPES = ((6, "({})", 1), (5, "{}.", 0), (4, "{}:", 0), (3, "{})", 0), (2, "{} ", 0))
_MCQ_START, _MCQ_END, _MCQ_PHRASE = 10, 9, 7


def _mcq(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """lmms-eval's ``extract_mcq_answer`` (MLVU): every shape each letter takes — the reply opening with it set
    apart (``B``, ``B. red``, ``B) red``), ending with it, after an answer phrase, ``(B)``, ``B.``, ``B:``, ``B)``,
    ``B `` — ranked by shape, then the later position; without any, the last capital among ``letters`` anywhere."""
    reply = text[start:end]
    body = reply.strip()
    if not body:
        return None
    at = start + len(reply) - len(reply.lstrip())  # where body[0] stands in text
    for char in _MCQ_STRIPPED:
        kept = body.lstrip(char)
        at, body = at + len(body) - len(kept), kept.rstrip(char)
    padded = f" {body} "  # padded[i] is text[at + i - 1]
    found: list[tuple[int, int, str, int]] = []  # (priority, position, letter, the letter's index in padded)
    for priority, pattern, offset in _MCQ_SHAPES:
        found += [(priority, p, ch, p + offset) for ch in letters if (p := padded.rfind(pattern.format(ch))) >= 0]
    lowered = padded.lower()
    for phrase in _MCQ_PHRASES:
        if (hit := lowered.find(phrase)) >= 0:
            found += [(_MCQ_PHRASE, p, ch, p) for ch in letters if (p := padded.find(ch, hit + len(phrase))) >= 0]
    stripped = padded.strip()
    lead = len(padded) - len(padded.lstrip())
    for ch in letters:
        if stripped.startswith(ch) and (len(stripped) == 1 or not stripped[1].isalpha()):
            found.append((_MCQ_START, 0, ch, lead))
        if stripped.endswith(ch) and (len(stripped) == 1 or not stripped[-2].isalpha()):
            found.append((_MCQ_END, len(padded) - 1, ch, lead + len(stripped) - 1))
    if not found:
        found = [(0, p, ch, p) for ch in letters if (p := padded.rfind(ch)) >= 0]
    if not found:
        return None
    _, _, letter, index = max(found, key=lambda c: c[:2])
    return letter, at + index - 1


def _polish(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """LVBench ``polish_answer``: stripped, cut at the first ``)``, from after a ``(`` to the next one, the first
    space-separated word's first character."""
    at, piece = _stripped(text[start:end], start)
    at, piece = _stripped(piece.partition(")")[0], at)
    if "(" in piece:
        opened = piece.index("(") + 1
        at, piece = _stripped(piece[opened:].partition("(")[0], at + opened)
    return (piece[0], at) if piece and piece[0] in letters else None


_BARE_VALUE = re.compile(r"(?<=:\s)([A-Za-z_]\w*)")
_CG_LETTER = re.compile(r"\b[A-H]\b")


def _cgbench(text: str, start: int, end: int, rule: LetterRule, letters: str) -> Found | None:
    """CG-Bench ``post_process``: the ``result`` of a ```` ```json ```` block, else the letters A–H standing alone
    as words when they name one letter (the script counts the reply right when the truth is any of several)."""
    fence = text.find("```json", start, end)
    close = text.find("```", fence + len("```json"), end) if fence >= 0 else -1
    if close >= 0:
        content = text[fence + len("```json") : close].strip()
        try:
            result = json.loads(_BARE_VALUE.sub(r'"\1"', content))["result"] if content else None
        except Exception:  # what the script catches: no JSON, no "result", not an object
            result = None
        if result is not None:
            value = result if isinstance(result, str) else None
            return (value, text.find(value, fence)) if value and value in letters and len(value) == 1 else None
    named = {m[0]: m.start() for m in reversed(list(_CG_LETTER.finditer(text, start, end)))}
    return next(iter(named.items())) if len(named) == 1 and next(iter(named)) in letters else None


FINDERS: dict[str, Finder] = {
    "lead": _lead,
    "marked": _marked,
    "reply": _reply,
    "first": _first,
    "mcq": _mcq,
    "polish": _polish,
    "cgbench": _cgbench,
}


# --- the reader ------------------------------------------------------------------------------------------------------


def answer_bounds(text: str, closed: bool = False) -> tuple[int, int] | None:
    """Where the content of the last ``<answer>`` block lies: ``(start, end)`` indices, the end being its ``</answer>``
    or, unless ``closed``, the end of the text; ``closed``: the last ``</answer>`` and the last opening before it."""
    if closed:
        end = text.rfind(ANSWER_CLOSE)
        start = text.rfind(ANSWER_OPEN, 0, end) if end >= 0 else -1
        return (start + len(ANSWER_OPEN), end) if start >= 0 else None
    start = text.rfind(ANSWER_OPEN)
    if start < 0:
        return None
    start += len(ANSWER_OPEN)
    end = text.find(ANSWER_CLOSE, start)
    return start, end if end >= 0 else len(text)


def read_letter(reply: object, letters: Iterable[str] | None = None, rule: LetterRule | None = None) -> Found | None:
    """The option letter ``reply`` names under ``rule`` (default :data:`TEMPLATE`) and its index in the text; None
    when it names none among ``letters`` (the question's option letters; default A–Z; a rule's own ``letters`` win).
    """
    rule = rule or TEMPLATE
    text = as_text(reply)
    allowed = rule.letters or ("".join(letters) if letters is not None else ALL_LETTERS)
    find = FINDERS[rule.find]
    start, end = 0, len(text)
    if rule.block != "none":
        bounds = answer_bounds(text, closed=rule.block == "closed")
        if bounds is not None:
            start, end = bounds
        elif rule.block == "closed":
            return None
        else:
            find = FINDERS[rule.unblocked or rule.find]
    if rule.boxed and (box := text.find("boxed{", start, end)) >= 0:
        inner = box + len("boxed{")
        while text.startswith("{", inner) and inner < end:
            inner += 1
        close = text.find("}", inner, end)
        start, end, find = inner, close if close >= 0 else end, FINDERS["lead"]
    found = find(text, start, end, rule, allowed)
    return found if found and found[0] in allowed else None


def letter_of(reply: object, letters: Iterable[str] | None = None, rule: LetterRule | None = None) -> str | None:
    """:func:`read_letter` without the index."""
    found = read_letter(reply, letters, rule)
    return found[0] if found else None


# --- phrases removed with the original indices kept ------------------------------------------------------------------


def _stripped(piece: str, at: int) -> tuple[int, str]:
    """``piece.strip()`` and the index its first character had (``at`` is where ``piece`` starts)."""
    return at + len(piece) - len(piece.lstrip()), piece.strip()


def _without(text: str, phrases: tuple[str, ...]) -> tuple[str, Callable[[int], int]]:
    """``text`` with each phrase removed in turn (``str.replace(p, "")``), and a map from an index of the result
    back to ``text``. One pass per phrase."""
    runs = [(0, 0, len(text))]  # (index in the result, index in text, length)
    for phrase in phrases:
        if phrase not in text:
            continue
        pieces, kept, at = [], [], 0
        while (hit := text.find(phrase, at)) >= 0:
            pieces.append(text[at:hit])
            kept.append((at, hit))
            at = hit + len(phrase)
        pieces.append(text[at:])
        kept.append((at, len(text)))
        runs = _cut(runs, kept)
        text = "".join(pieces)

    def where(i: int) -> int:
        for out, src, n in runs:
            if out <= i < out + n:
                return src + i - out
        return i

    return text, where


def _cut(runs: list[tuple[int, int, int]], kept: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The runs of a text after only its ``kept`` ranges remain (both in order; one merge pass)."""
    out, r, pos = [], 0, 0
    for lo, hi in kept:
        while lo < hi:
            while runs[r][0] + runs[r][2] <= lo:
                r += 1
            first, src, n = runs[r]
            take = min(hi, first + n) - lo
            out.append((pos, src + lo - first, take))
            pos, lo = pos + take, lo + take
    return out


# --- the named rules -------------------------------------------------------------------------------------------------

TEMPLATE = LetterRule()
REPLY = LetterRule(
    "this package's reading (answer phrases; the only option letter)", find="reply", boxed=True, dotted=True
)
LEAD = LetterRule(block="none")  # one answer's text, no tags: ``B``, ``(B)``, ``B. green``, ``b``
BOXED = LetterRule(block="none", boxed=True)  # an <answer> content of VideoZoomer's: ``\boxed{B}`` or as LEAD
CLOSED = LetterRule(block="closed", boxed=True)  # VideoZoomer's final turn: the last closed block only

# the official scripts' phrase lists, verbatim (Video-MME's misses two commas: two pairs are joined into one string)
VIDEOMME_PHRASES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",
    "Best answer:Best option:",
)
LONGVIDEOBENCH_PHRASES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
)
VIDEOMME = LetterRule("Video-MME eval_your_results.py", find="first", phrases=VIDEOMME_PHRASES, letters="ABCD")
LONGVIDEOBENCH = LetterRule(
    "lmms-eval longvideobench utils.py", find="first", phrases=LONGVIDEOBENCH_PHRASES, letters="ABCDE"
)
MLVU = LetterRule("lmms-eval 0.7.3 mlvu utils.py (extract_mcq_answer)", find="mcq", letters="ABCD")
LVBENCH = LetterRule("LVBench answer_util.py polish_answer", find="polish")
CGBENCH = LetterRule("CG-Bench run/utils.py post_process", find="cgbench", letters="ABCDEFGH")


# --- thin names for the callers --------------------------------------------------------------------------------------


def extract_letter(text: str) -> str | None:
    """The option letter an answer's text names (:data:`LEAD`): ``"B"``, ``"(B)"``, ``"B. green"``, ``"b"``; else
    None."""
    return letter_of(text, rule=LEAD)


def answer_letter_at(response: object) -> Found | None:
    """:func:`answer_letter` and the index of the letter in the text (where its token's probability is read)."""
    return read_letter(response, rule=TEMPLATE)


def answer_letter(response: object) -> str | None:
    """The option letter of an answer-only reply (:data:`TEMPLATE`): the last ``<answer>…</answer>`` (its closing
    tag may be cut off by the token limit), else the whole reply, read by :func:`extract_letter`.

    What the fine pass is asked for is a bare letter, but a model trained on the grounding template often
    writes ``<answer>B</answer>``. Linear time; never raises.
    """
    return letter_of(response, rule=TEMPLATE)


def boxed_letter(content: str) -> str | None:
    """The option letter an ``<answer>`` content names (:data:`BOXED`): ``\\boxed{B}`` (any backslashes and braces,
    as the VideoZoomer evaluation prompt asks), else a leading ``B`` / ``(B)`` / ``B. text``; None otherwise."""
    return letter_of(content, rule=BOXED)


def last_answer(text: str) -> tuple[str | None, str | None]:
    """The content of the last closed ``<answer>…</answer>`` (the last closing tag and the last opening tag
    before it), stripped, and the letter :func:`boxed_letter` reads in it; ``(None, None)`` without one."""
    bounds = answer_bounds(text, closed=True)
    if bounds is None:
        return None, None
    return text[bounds[0] : bounds[1]].strip(), letter_of(text, rule=CLOSED)
