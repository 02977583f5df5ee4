"""Prompts: the grounded-answer prompt (coarse pass) and the answer-only prompt (fine, zoom-in pass).

Two styles, chosen by name everywhere a prompt is built (``zoomzero data convert --prompt``, the eval modes'
window prompts, the zoom pass's ``prompt`` option):

- ``paper`` (default): Zoom-Zero's prompt word for word — "Answer the question: … according to the content of
  the video. Select the answer from: … Output key information …", preceded by the video's length as the
  authors' code states it ("This video in total has 42.0 seconds. "); options as the authors join them,
  ``(A) red (B) green``. The fine pass asks "…Select the answer from:  (A) red (B) green. Respond with only
  the letter of the option." (the authors' training code, its double space included).
- ``concise``: this package's shorter wording (the answer format in one paragraph, then a
  ``Question:``/``Options:`` block with one option per line).

Both prompts start with EasyR1's ``<video>`` placeholder (the video comes before the text, as in the
authors' training code).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ground_truth import LETTERS
from ..question import VIDEO_PLACEHOLDER, option_texts, question_block
from ..rows import PROMPT_KEY, make_row

PROMPT_STYLES = ("paper", "concise")
DEFAULT_PROMPT_STYLE = "paper"

# The paper's grounding instruction, as the authors' released evaluation code holds it
# (xiaoqian-shen/Zoom-Zero src_eval/eval_nextgqa.py, QUESTION_TEMPLATE; its escaped "\n" rendered).
PAPER_INSTRUCTION = (
    "\nOutput key information relevant to the question and options, marking precise timestamps or time ranges in "
    "seconds within <time> </time> tags, and present them in an interleaved analysis format. Enclose the full "
    "analysis in <think> </think> tags. For example: <think> After folding the face towel <time> from 5.2s to "
    "10.4s </time>, the person placed it on the bed <time> from 20.3s to 30.8s </time>.</think>\n\n"
    "Then, provide your answer within the <answer> </answer> tags, output the corresponding letter of the option. "
    "At the same time, in the <glue> </glue> tags, include only the precise video segments (in seconds) that "
    "strongly support your answer, in the format of [(s1, e1), (s2, e2), ...]. Do not list unrelated time ranges. "
    "For example: <answer>A</answer>\n<glue>[(20.3, 30.8)]</glue>.\n"
)
# The fine pass's instruction (authors' training code, verl/utils/dataset_video.py: raw_question).
ZOOM_INSTRUCTION = "Respond with only the letter of the option."

FORMAT_INSTRUCTION = (
    "Find the moments in the video that answer the question. Reason inside <think> </think>, citing each "
    "moment you use as <time>(start, end)</time> in seconds. Then give the letter of the correct option "
    "inside <answer> </answer>, and inside <glue> </glue> list only the video segments, in seconds, that "
    "support your answer, as [(s1, e1), (s2, e2), ...]. For example: <think>The person lifts the cup at "
    "<time>(12.0, 15.5)</time>.</think><answer>B</answer><glue>[(12.0, 15.5)]</glue>"
)


def check_style(style: str) -> str:
    if style not in PROMPT_STYLES:
        raise ValueError(f"prompt style must be one of {PROMPT_STYLES}, got {style!r}")
    return style


def paper_options(options: Sequence[str]) -> str:
    """``(A) red (B) green``: the options on one line, as the authors' code joins them (``' '.join``)."""
    return " ".join(f"({letter}) {text}" for letter, text in zip(LETTERS, option_texts(options)))


def video_length(duration: float) -> str:
    """The authors' duration sentence: ``This video in total has 42.0 seconds. `` (seconds rounded to 0.01)."""
    return f"This video in total has {round(float(duration), 2)} seconds. "


def paper_question(question: str, options: Sequence[str]) -> str:
    """The question line of the paper's prompt, with its options."""
    return (
        f"Answer the question: {question.strip()} according to the content of the video. "
        f"Select the answer from: {paper_options(options)}"
    )


def grounding_instruction(question: str, options: Sequence[str], style: str = DEFAULT_PROMPT_STYLE) -> str:
    """The prompt's text after any statement about the video: instruction, question and options."""
    if check_style(style) == "paper":
        return f"{paper_question(question, options)}\n{PAPER_INSTRUCTION}"
    return f"{FORMAT_INSTRUCTION}\n{question_block(question, options)}"


def grounding_prompt(
    question: str,
    options: Sequence[str],
    duration: float | None = None,
    video: bool = True,
    style: str = DEFAULT_PROMPT_STYLE,
) -> str:
    """The coarse-pass prompt asking for the template ``<think>…</think><answer>…</answer><glue>…</glue>``.

    ``duration`` (seconds) is stated when given; with ``video`` the text starts with ``<video>``.
    """
    head = VIDEO_PLACEHOLDER if video else ""
    if check_style(style) == "paper":
        length = video_length(duration) if duration is not None else ""
    else:
        length = f"The video is {duration:.1f} seconds long. " if duration is not None else ""
    return f"{head}{length}{grounding_instruction(question, options, style)}"


def zoom_prompt(question: str, options: Sequence[str], video: bool = True, style: str = DEFAULT_PROMPT_STYLE) -> str:
    """The fine-pass prompt: the question and options, answer with the option letter only."""
    head = VIDEO_PLACEHOLDER if video else ""
    if check_style(style) == "paper":
        return (
            f"{head}Answer the question: {question.strip()} according to the content of the video. "
            f"Select the answer from:  {paper_options(options)}. {ZOOM_INSTRUCTION}"
        )
    return f"{head}{question_block(question, options)}\n{ZOOM_INSTRUCTION}"


def grounding_row(*, style: str = DEFAULT_PROMPT_STYLE, **fields: Any) -> dict[str, Any]:
    """A dataset row of :func:`~zoomzero_plugin.rows.make_row`'s keyword ``fields`` (all but ``prompt``) whose prompt
    is the grounding prompt of ``style`` (``paper``: the paper's words, ``concise``: this package's), stating the
    video's duration."""
    row = make_row(prompt="", **fields)  # validates the fields first
    options = [str(o) for o in fields["options"]]
    return {**row, PROMPT_KEY: grounding_prompt(fields["question"], options, float(fields["duration"]), style=style)}
