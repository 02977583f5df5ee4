"""VideoZoomer's no-tool baseline: the same question without the ``<video_zoom>`` tool, as the authors evaluate it.

The authors measure what the tool adds with ``scripts/eval_video_notool.sh`` (zsgvivo/VideoZoomer @ 5638153): the
system prompt ``You are a helpful assistant.``; the video sampled by the same sampler as the agent's overview at
``data.video_fps=0.2`` with at most ``data.frames_upbound=120`` frames, each shrunk to ≤ 100,352 pixels (scaled
back up to ≥ ``data.min_pixels=12544``), and — ``data.pass_video_as_frames=False`` — handed to the model as **one
video** (``<|vision_start|><|video_pad|><|vision_end|>``, no frame labels; the processor pairs frames and rounds
their sides to its patch grid; no sample rate is passed, so it assumes its default); ``tool_call=null``: the plain
rollout, one reply of ≤ ``data.max_response_length=2048`` tokens, no stop string; greedy for validation.

:data:`NO_TOOL_BUDGET` holds those numbers as an :class:`~.budget.AgentBudget` (one round, no calls);
:func:`reply_letter` reads the reply's answer: the last ``<answer>`` content (to its ``</answer>`` or the end),
read as the agent's final answer is (``B``, ``(B)``, ``B. text`` or ``\\boxed{B}``); a reply without tags names a
letter by ``\\boxed{B}`` or by opening with one set apart (``B``, ``(B) text``, ``B. text``; not ``A man …``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..answers import LetterRule, letter_of
from ..question import VIDEO_PLACEHOLDER
from .budget import AgentBudget
from .environment import END_ANSWER, END_NO_ANSWER, Frame, VideoInfo, labelled, overview_indices
from .protocol import ANSWER, NONE
from .render import QWEN_VIDEO, first_prompt
from .transcript import Transcript, TurnRecord, frame_record, video_record

NO_TOOL = "notool"  # the transcripts' prompt name
NO_TOOL_SYSTEM = "You are a helpful assistant."  # eval_video_notool.sh: data.system_prompt
NO_TOOL_BUDGET = AgentBudget(
    overview_fps=0.2,  # data.video_fps
    max_overview_frames=120,  # data.frames_upbound
    min_frame_pixels=12544,  # data.min_pixels (data.max_pixels: 100,352 as the agent's)
    max_assistant_turns=1,
    max_calls=0,
    max_new_tokens=2048,  # data.max_response_length
    max_response_tokens=2048,
)
# the last <answer> content read as the agent's final answer is; a reply without tags by \boxed{B} or by opening
# with a letter set apart (``B``, ``(B) text``, ``B. text``, ``B: text``, ``B, text``; not ``A man …``)
NO_TOOL_LETTERS = LetterRule(unblocked="marked", boxed=True)


def video_frames(video: VideoInfo, budget: AgentBudget = NO_TOOL_BUDGET) -> tuple[Frame, ...]:
    """The frames the model sees (native indices, times): the authors' sampler at ``budget.overview_fps``."""
    return labelled(overview_indices(video, budget), video.fps)


def no_tool_prompt(apply_chat_template: Callable[..., str], user_text: str) -> str:
    """The prompt: the chat template over ``[system, user]``, the user text's ``<video>`` replaced by one video
    placeholder (the video first when the text has none)."""
    before, sep, after = user_text.partition(VIDEO_PLACEHOLDER)
    if not sep:
        before, after = "", user_text
    return first_prompt(apply_chat_template, NO_TOOL_SYSTEM, [before, QWEN_VIDEO, after])


def reply_letter(text: str) -> str | None:
    """The option letter a no-tool reply answers (see the module docstring); None when it names none."""
    return letter_of(text, rule=NO_TOOL_LETTERS)


def no_tool_transcript(video: VideoInfo, frames: Sequence[Frame], text: str, tokens: int | None = None) -> Transcript:
    """The record of one no-tool reply, in the agent's transcript shape (one turn, no calls)."""
    letter = reply_letter(text)
    turn = TurnRecord(text=text, kind=ANSWER if letter is not None else NONE, tokens=tokens)
    return Transcript(
        prompt=NO_TOOL,
        video=video_record(video),
        overview=frame_record(frames),
        turns=(turn,),
        end=END_ANSWER if letter is not None else END_NO_ANSWER,
        answer=letter,
        calls=0,
        errors=0,
        clip_frames=0,
        images=len(frames),
    )
