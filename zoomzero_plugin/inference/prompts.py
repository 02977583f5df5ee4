"""Prompts for passes that see only part of a video (windows, refinement rounds).

The core prompts (:mod:`zoomzero_plugin.gvqa.prompts`) cover the coarse pass (whole video) and the answer-only
fine pass. A pass that must *ground* inside part of the video tells the model which seconds it sees and
asks for times in seconds of the whole video, so its spans need no shifting. ``style`` is the prompt
style (``paper`` or ``concise``) of the instruction that follows.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gvqa.prompts import DEFAULT_PROMPT_STYLE, grounding_instruction, grounding_prompt
from ..question import VIDEO_PLACEHOLDER
from ..spans import Span


def _ranges(spans: Sequence[Span]) -> str:
    return ", ".join(f"{s:.1f}-{e:.1f}" for s, e in spans)


def part_prompt(
    question: str, options: Sequence[str], shown: Sequence[Span], duration: float, style: str = DEFAULT_PROMPT_STYLE
) -> str:
    """Grounding prompt for clips ``shown`` (absolute seconds) of a ``duration``-second video."""
    noun = "clip shows seconds" if len(shown) == 1 else "clips show seconds"
    head = (
        f"{VIDEO_PLACEHOLDER}The {noun} {_ranges(shown)} of a {duration:.1f}-second video. "
        "Give every time in seconds of the whole video. "
    )
    return f"{head}{grounding_instruction(question, options, style)}"


def window_prompt(
    question: str,
    options: Sequence[str],
    window: Span,
    duration: float,
    absolute: bool,
    style: str = DEFAULT_PROMPT_STYLE,
) -> str:
    """Divide-and-conquer window prompt. ``absolute=False`` presents the window as a video of its own
    (times from 0, as Qwen2.5-VL's time encoding restarts at every clip); the caller shifts the spans."""
    if absolute:
        return part_prompt(question, options, [window], duration, style)
    return grounding_prompt(question, options, window[1] - window[0], style=style)
