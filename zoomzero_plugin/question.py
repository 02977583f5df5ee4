"""A question as a model reads it, shared by both methods: the video placeholder, the options' labels and the
``Question:``/``Options:`` block."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .ground_truth import LETTERS

VIDEO_PLACEHOLDER = "<video>"  # EasyR1's placeholder: where the video goes in a prompt's text

_LABELLED = re.compile(r"^\s*\(?([A-Z])[).:]\s*")


def option_texts(options: Sequence[str]) -> list[str]:
    """Option texts without a leading label of their own (``"(A) red"``, ``"A. red"`` → ``"red"``)."""
    return [(_LABELLED.sub("", str(o), count=1) if _LABELLED.match(str(o)) else str(o)).strip() for o in options]


def format_options(options: Sequence[str]) -> str:
    """One ``(A) text`` line per option; labels already present are kept, not doubled."""
    return "\n".join(f"({letter}) {text}" for letter, text in zip(LETTERS, option_texts(options)))


def question_block(question: str, options: Sequence[str]) -> str:
    """``Question: …`` then ``Options:`` and one ``(A) text`` line per option."""
    return f"Question: {question.strip()}\nOptions:\n{format_options(options)}"
