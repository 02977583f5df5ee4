"""Prompts: the grounded-answer format prompt (coarse pass) and the answer-only zoom prompt (fine pass)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .ground_truth import LETTERS

VIDEO_PLACEHOLDER = "<video>"

FORMAT_INSTRUCTION = (
    "Find the moments in the video that answer the question. Reason inside <think> </think>, citing each "
    "moment you use as <time>(start, end)</time> in seconds. Then give the letter of the correct option "
    "inside <answer> </answer>, and inside <glue> </glue> list only the video segments, in seconds, that "
    "support your answer, as [(s1, e1), (s2, e2), ...]. For example: <think>The person lifts the cup at "
    "<time>(12.0, 15.5)</time>.</think><answer>B</answer><glue>[(12.0, 15.5)]</glue>"
)

ZOOM_INSTRUCTION = "Respond with only the letter of the option."

_LABELLED = re.compile(r"^\s*\(?([A-Z])[).:]\s*")


def format_options(options: Sequence[str]) -> str:
    """One ``(A) text`` line per option; labels already present (``"(A) red"``, ``"A. red"``) are kept."""
    lines = []
    for letter, option in zip(LETTERS, options):
        text = _LABELLED.sub("", str(option), count=1) if _LABELLED.match(str(option)) else str(option)
        lines.append(f"({letter}) {text.strip()}")
    return "\n".join(lines)


def question_block(question: str, options: Sequence[str]) -> str:
    return f"Question: {question.strip()}\nOptions:\n{format_options(options)}"


def grounding_prompt(question: str, options: Sequence[str], duration: float | None = None, video: bool = True) -> str:
    """The coarse-pass prompt asking for the template ``<think>…<answer>…<glue>…``.

    With ``video`` the text starts with EasyR1's ``<video>`` placeholder.
    """
    length = f"The video is {duration:.1f} seconds long. " if duration is not None else ""
    head = VIDEO_PLACEHOLDER if video else ""
    return f"{head}{length}{FORMAT_INSTRUCTION}\n{question_block(question, options)}"


def zoom_prompt(question: str, options: Sequence[str], video: bool = True) -> str:
    """The fine-pass prompt: the question and options, answer with a letter only."""
    head = VIDEO_PLACEHOLDER if video else ""
    return f"{head}{question_block(question, options)}\n{ZOOM_INSTRUCTION}"
