"""Rendering a trajectory into model inputs, and the response string back into turns.

What the released rollout feeds the model (``vllm_async_engine.py``): the first prompt is the chat template
over ``[system, user]`` with each overview frame as its label and an image placeholder; every assistant turn is
followed by ``<|im_end|>`` and, when the trajectory goes on, by the observation as
``<|im_start|>user\\n{observation}<|im_end|>\\n<|im_start|>assistant\\n`` — with no newline between the
assistant's ``<|im_end|>`` and the next ``<|im_start|>`` (the chat template would put one there).
:func:`prompt_text` reproduces exactly that string; :func:`chat_messages` gives the same conversation as chat
messages (frames as images), for processors and exporters that apply the template themselves.

The reward scores one *response* string: everything after the first prompt (:func:`response_text`), so that
it works unchanged on what an RL rollout decodes. :func:`split_response` cuts such a string back into
assistant and user turns in one linear pass, whether special tokens were kept or skipped when it was decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .environment import Frame, Observation, parts_text
from .prompts import clip_label
from .protocol import CALL_CLOSE

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
QWEN_IMAGE = "<|vision_start|><|image_pad|><|vision_end|>"  # one image in a Qwen-VL prompt (before expansion)
QWEN_VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"  # one video (the no-tool baseline's; a clip as video)
# How a clip's frames reach the model: images (each after its time label, as the authors' checkpoints were trained)
# or video (one video per clip, after its time range: its own rate and absolute times reach the model through its
# time encoding: Qwen3-VL's timestamps, Qwen2.5-VL's time-aligned M-RoPE).
CLIP_AS = ("images", "video")
ASSISTANT, USER = "assistant", "user"
_USER_HEAD = USER + "\n"
_ASSISTANT_HEAD = ASSISTANT + "\n"
_SENTINEL = "<<zoomzero-agent-user-turn>>"

Parts = Sequence["str | Frame"]


def first_prompt(apply_chat_template: Callable[..., str], system: str, user: Parts, image: str = QWEN_IMAGE) -> str:
    """The first prompt: ``apply_chat_template`` (a tokenizer's or processor's) over ``[system, user]`` with
    string contents, generation prompt added, the user text holding the labelled frames."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": _SENTINEL}]
    text = apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if text.count(_SENTINEL) != 1:
        raise ValueError("the chat template did not render the user turn's text exactly once")
    return text.replace(_SENTINEL, parts_text(user, image))


def check_clip_as(value: str) -> str:
    """``value`` when it is one of :data:`CLIP_AS`; ValueError otherwise."""
    if value not in CLIP_AS:
        raise ValueError(f"clip_as must be one of {CLIP_AS}, got {value!r}")
    return value


def observation_text(observation: Observation, clip_as: str = "images") -> str:
    """An observation as the model reads it: each frame an image after its label, or (``clip_as="video"``) the
    clip one video after its time range."""
    return observation.text(QWEN_IMAGE, QWEN_VIDEO if check_clip_as(clip_as) == "video" else None)


def observation_block(observation: str) -> str:
    """An observation as the rollout appends it: a user turn, then the next assistant turn's header."""
    return f"{IM_START}{_USER_HEAD}{observation}{IM_END}\n{IM_START}{_ASSISTANT_HEAD}"


def response_text(turns: Sequence[tuple[str, str | None]]) -> str:
    """Everything after the first prompt: each ``(assistant text, observation text or None)`` in order, every
    assistant turn closed with ``<|im_end|>`` (as the rollout appends it)."""
    out = []
    for text, observation in turns:
        out += [text, IM_END]
        if observation is not None:
            out.append(observation_block(observation))
    return "".join(out)


def prompt_text(first: str, turns: Sequence[tuple[str, str | None]]) -> str:
    """The prompt of the next round: the first prompt, then every turn so far (the last one observed)."""
    return first + response_text(turns)


def chat_messages(
    system: str, user: Parts, turns: Sequence[tuple[str, Parts | None]], clip_as: str = "images"
) -> list[dict[str, Any]]:
    """The conversation as chat messages: content lists of ``{"type": "text"}`` and ``{"type": "image"}``
    items (each frame: its label, then the image), observations as user turns; with ``clip_as="video"``, each
    observation's clip as one ``{"type": "video"}`` item after its time range (the first user turn stays images)."""

    def content(parts: Parts, video: bool) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []

        def add(kind: str, text: str = "") -> None:
            if kind != "text":
                items.append({"type": kind})
            elif items and items[-1]["type"] == "text":
                items[-1]["text"] += text
            elif text:
                items.append({"type": "text", "text": text})

        run: list[Frame] = []
        for p in (*parts, ""):
            if isinstance(p, Frame) and video:
                run.append(p)
                continue
            if run:
                add("text", clip_label(run[0].time, run[-1].time))
                add("video")
                run = []
            add("text", p if isinstance(p, str) else p.label)
            if not isinstance(p, str):
                add("image")
        return items

    videos = check_clip_as(clip_as) == "video"
    messages = [
        {"role": "system", "content": [{"type": "text", "text": system}]},
        {"role": USER, "content": content(user, False)},
    ]
    for text, observation in turns:
        messages.append({"role": ASSISTANT, "content": [{"type": "text", "text": text}]})
        if observation is not None:
            messages.append({"role": USER, "content": content(observation, videos)})
    return messages


@dataclass(frozen=True)
class Segment:
    role: str  # "assistant" | "user"
    text: str


def split_response(text: str) -> list[Segment]:
    """Assistant and user turns of a response string (the first segment is the first assistant turn).

    With special tokens kept, turns are cut at ``<|im_start|>`` and end at ``<|im_end|>``; an ``<|im_start|>``
    not followed by a role stays in the turn's text. With special tokens skipped (``user\\n`` and
    ``assistant\\n`` are all that is left of the markers), an observation is a ``user\\n`` right after an
    assistant turn's ``</video_zoom>`` (a newline between allowed) and runs to the next ``\\nassistant\\n``;
    an assistant turn never holds text after its ``</video_zoom>`` (the rollout stops there). Linear time.
    """
    return _split_marked(text) if IM_START in text or IM_END in text else _split_plain(text)


def _split_marked(text: str) -> list[Segment]:
    segments: list[tuple[str, list[str]]] = [(ASSISTANT, [])]
    for k, chunk in enumerate(text.split(IM_START)):
        role = None
        if k > 0:
            for head, name in ((_USER_HEAD, USER), (_ASSISTANT_HEAD, ASSISTANT)):
                if chunk.startswith(head):
                    role, chunk = name, chunk[len(head) :]
                    break
        if role is not None:
            segments.append((role, []))
        elif k > 0:
            segments[-1][1].append(IM_START)
        segments[-1][1].append(chunk)
    out = []
    for role, pieces in segments:
        body = "".join(pieces)
        end = body.find(IM_END)
        out.append(Segment(role, body if end < 0 else body[:end]))
    return out


def _split_plain(text: str) -> list[Segment]:
    out: list[Segment] = []
    pos, n = 0, len(text)
    while True:
        close = text.find(CALL_CLOSE, pos)
        if close < 0:
            out.append(Segment(ASSISTANT, text[pos:]))
            return out
        cut = close + len(CALL_CLOSE)
        head = cut + 1 if text.startswith("\n" + _USER_HEAD, cut) else cut
        if not text.startswith(_USER_HEAD, head):
            out.append(Segment(ASSISTANT, text[pos:]))
            return out
        out.append(Segment(ASSISTANT, text[pos:cut]))
        body = head + len(_USER_HEAD)
        stop = text.find("\n" + _ASSISTANT_HEAD, body)
        if stop < 0:
            out.append(Segment(USER, text[body:n]))
            return out
        out.append(Segment(USER, text[body:stop]))
        pos = stop + len(_ASSISTANT_HEAD) + 1
