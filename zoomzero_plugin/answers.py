"""Reading the option letter an answer names: the one home of every answer reader, shared by both methods.

Zoom-Zero's fine pass and evaluation read a reply (:func:`answer_letter`); VideoZoomer's turns read their last
closed ``<answer>`` block (:func:`last_answer`, ``\\boxed{B}`` included). Every reader accepts any input, never
raises and runs in time linear in the text's length (``str.find``/``str.rfind`` scans and an anchored letter
match).
"""

from __future__ import annotations

from .tags import letter_at

ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"


def as_text(response: object) -> str:
    """Any model output as text: bytes decoded (invalid UTF-8 replaced), None as empty, others by str()."""
    if isinstance(response, str):
        return response
    if isinstance(response, (bytes, bytearray)):
        return bytes(response).decode("utf-8", errors="replace")
    return "" if response is None else str(response)


def _letter_in(text: str, start: int, end: int) -> tuple[str, int] | None:
    """The option letter ``text[start:end]`` names and its index in ``text`` (see :func:`extract_letter`)."""
    content = text[start:end]
    found = letter_at(content)
    if found:
        return found[0], start + found[1]
    stripped = content.strip().strip("()")
    if len(stripped) == 1 and stripped.isalpha() and stripped.isascii():
        return stripped.upper(), start + content.index(stripped)
    return None


def extract_letter(text: str) -> str | None:
    """The option letter an answer names: ``"B"``, ``"(B)"``, ``"B. green"``, ``"b"``; else None."""
    found = _letter_in(text, 0, len(text))
    return found[0] if found else None


def answer_letter_at(response: object) -> tuple[str, int] | None:
    """:func:`answer_letter` and the index of the letter in the text (where its token's probability is read)."""
    text = as_text(response)
    start = text.rfind(ANSWER_OPEN)
    if start < 0:
        return _letter_in(text, 0, len(text))
    start += len(ANSWER_OPEN)
    end = text.find(ANSWER_CLOSE, start)
    return _letter_in(text, start, end if end >= 0 else len(text))


def answer_letter(response: object) -> str | None:
    """The option letter of an answer-only reply: the last ``<answer>…</answer>`` (its closing tag may be cut
    off by the token limit) read by :func:`extract_letter`, else the whole reply (``"B"``, ``"(B) green"``).

    What the fine pass is asked for is a bare letter, but a model trained on the grounding template often
    writes ``<answer>B</answer>``. Linear time (``str.rfind``/``str.find``); never raises.
    """
    found = answer_letter_at(response)
    return found[0] if found else None


def boxed_letter(content: str) -> str | None:
    """The option letter an ``<answer>`` content names: ``\\boxed{B}`` (any backslashes and braces, as the
    VideoZoomer evaluation prompt asks), else a leading ``B`` / ``(B)`` / ``B. text``; None otherwise."""
    box = content.find("boxed{")
    if box >= 0:
        inner_start = box + len("boxed{")
        while content.startswith("{", inner_start):
            inner_start += 1
        close = content.find("}", inner_start)
        return extract_letter(content[inner_start : close if close >= 0 else len(content)])
    return extract_letter(content)


def last_answer(text: str) -> tuple[str | None, str | None]:
    """The content of the last closed ``<answer>…</answer>`` (the last closing tag and the last opening tag
    before it), stripped, and the letter :func:`boxed_letter` reads in it; ``(None, None)`` without one."""
    close = text.rfind(ANSWER_CLOSE)
    if close < 0:
        return None, None
    open_ = text.rfind(ANSWER_OPEN, 0, close)
    if open_ < 0:
        return None, None
    content = text[open_ + len(ANSWER_OPEN) : close].strip()
    return content, boxed_letter(content)
