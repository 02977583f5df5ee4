"""Teach a tiny random Qwen-VL (2.5 or 3) the response formats, not the answers: a cold start for RL runs on a CPU.

A random model never writes ``<answer>X</answer>``, a ``<glue>`` list or a ``<video_zoom>`` call, so every response
of a group gets the same reward (0), every advantage is 0 and GRPO learns nothing. A few seconds of supervised steps
on responses in the right format — with the option letter, the spans and the called segment drawn at random, never
the true ones — give a policy that writes the formats with chosen letters and spans spread evenly: rewards then
differ within a group, and what RL learns (the right letter, the right span, where to look) is left to RL. The
same idea as VideoZoomer's cold-start SFT, at toy scale.

Each prompt is what the RL run shows the model, with its images and videos (and their timing: Qwen3-VL's timestamps).

- ``grounded`` (Zoom-Zero): the rows' own prompts. Short prompts keep it fast: the tiny tokenizer spells the
  paper's 100-word instruction in ~550 tokens, and a model taught on cut prompts does not write the format after
  whole ones (:func:`short_prompts`).
- ``agent`` (VideoZoomer): the agent's own first prompt (its system prompt, the question and the labelled overview)
  answered with a call on one of a few segments, and the prompt after that call's clip answered with a letter —
  both turns exactly as the rollout renders them (:mod:`zoomzero_plugin.agent.render`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..agent import AgentBudget, Trajectory
from ..agent.clips import clip_video
from ..agent.frames import FrameReader
from ..agent.prompts import get_prompts, question_text
from ..agent.render import QWEN_IMAGE, QWEN_VIDEO, check_clip_as, first_prompt, observation_text, prompt_text
from ..ground_truth import LETTERS, GroundTruth
from ..gvqa.prompts import zoom_prompt
from ..gvqa.zoom import ZoomBudget, fetch_plan, plan_pass
from ..inference.backend import FrameVideo
from ..question import VIDEO_PLACEHOLDER
from ..video import fetch_element
from ..vision import fetch_patch_size, qwen_vl_utils_factor
from .benchmark import clip_letter, colour_letter, row_squares
from .sft import SCHEDULES, train_steps

KINDS = ("grounded", "agent")


class Example(NamedTuple):
    """One supervised pair: the prompt as the model reads it (chat template applied, one placeholder per image or
    video), the response, and what the placeholders show: images (PIL), videos (``(T, 3, H, W)`` frames as
    qwen-vl-utils returns them) with their sample rates and decoder metadata (native indices and rate: Qwen3-VL's
    timestamps). Examples of one video share these objects."""

    prompt: str
    response: str
    images: tuple[Any, ...] = ()
    videos: tuple[Any, ...] = ()
    video_fps: tuple[float, ...] = ()
    video_metadata: tuple[dict[str, Any], ...] = ()


class VideoInput(NamedTuple):
    """How the Zoom-Zero rollout shows videos (recipe keys): the coarse pass's ``data.video_fps``,
    ``data.min_pixels`` and ``data.max_pixels``, and the zoom pass's budget (``zoom.*``)."""

    fps: float
    min_pixels: int
    max_pixels: int
    zoom: ZoomBudget


def _span(rng: random.Random, duration: float) -> tuple[float, float]:
    start = round(rng.uniform(0.0, duration * 0.8), 1)
    return start, round(min(duration, start + rng.uniform(1.0, duration / 3)), 1)


def _whole_span(rng: random.Random, duration: float) -> tuple[int, int]:
    """A span of whole seconds: with ``last = max(1, floor(duration))``, the start uniform over ``0 .. last - 1``, the
    length uniform over ``1 .. max(1, floor(duration / 3))``, the end clamped to ``last``. A video under a second gets
    ``(0, 1)``, which the parser clamps to the whole video; ``(0, 0)`` would be a zero-length span, invalid."""
    last = max(1, math.floor(duration))
    start = rng.randrange(last)
    return start, min(last, start + rng.randint(1, max(1, math.floor(duration / 3))))


def grounded_response(rng: random.Random, truth: GroundTruth, whole_seconds: bool = False) -> str:
    """A Zoom-Zero template response with a random letter among the options and a random span.

    ``whole_seconds``: the span in whole seconds, cited once (in ``<glue>`` only; ``<think>`` names no time). A
    2-layer model samples each digit of a span nearly on its own: taught two spans of tenths, about half its samples
    at temperature 1 write a span that ends before it starts, a ``<glue>`` span other than the ``<think>`` one, or a
    number like ``8.5.2``; taught one span of whole seconds, what RL has to find is two or three tokens."""
    letter = LETTERS[rng.randrange(len(truth.options))]
    if whole_seconds:
        s, e = _whole_span(rng, truth.duration)
        return f"<think>The square is in this span.</think><answer>{letter}</answer><glue>[({s}, {e})]</glue>"
    s, e = _span(rng, truth.duration)
    return f"<think>The square is at <time>({s}, {e})</time>.</think><answer>{letter}</answer><glue>[({s}, {e})]</glue>"


def call_segments(
    duration: float, max_frames_per_call: int, parts: int = 3, tile: bool = False, dense: bool = False
) -> list[tuple[int, int, int]]:
    """``(start, end, fps)`` of the calls the warm start teaches: up to ``parts`` segments that all end at the video's
    end (whole seconds) at 1 fps, the k-th lasting k/parts of ``min(duration, max_frames_per_call)`` seconds (whole,
    at least 1: every call returns frames). Only the start differs: a 2-layer model does not learn an end that depends
    on the start (it writes ``[6, 6]``).

    ``tile``: instead, up to ``parts`` consecutive segments of one whole length from 0 s, ``duration / parts`` (at most
    ``max_frames_per_call``, at least 1 s) at 1 fps: a 12-s video in thirds, ``(0, 4)``, ``(4, 8)``, ``(8, 12)`` — each
    part of the video can be called alone (three fixed calls, learnt as three strings).

    ``dense``: each segment at the highest whole fps its frame budget allows, ``max_frames_per_call // length`` (a
    4-s third with 16 frames a call: 4 fps), so a clip shows as much of its segment as a call may."""
    end = math.floor(duration)
    if tile:
        length = max(1, min(end // parts, max_frames_per_call))
        segments = [(k * length, (k + 1) * length) for k in range(min(parts, end // length))]
    else:
        span = min(end, max_frames_per_call)
        lengths = sorted({max(1, span * k // parts) for k in range(1, parts + 1)}, reverse=True)
        segments = [(end - length, end) for length in lengths]
    return [(s, e, max(1, max_frames_per_call // (e - s)) if dense else 1) for s, e in segments]


def tile_unions(
    tiles: Sequence[tuple[int, int, int]], max_frames_per_call: int, dense: bool = False
) -> list[tuple[int, int, int]]:
    """Every run of consecutive ``tiles`` (:func:`call_segments` with ``tile``) as one segment, shortest first within
    each start: a 12-s video in thirds gives ``(0, 4)``, ``(0, 8)``, ``(0, 12)``, ``(4, 8)``, ``(4, 12)``, ``(8, 12)``
    — the segments an agent taught the three thirds also writes (it mixes their starts and ends). At 1 fps, or with
    ``dense`` at the highest whole fps the frame budget allows; a run longer than ``max_frames_per_call`` seconds is
    left out (at 1 fps it asks more frames than a call may)."""
    out = []
    for i, (start, _, _) in enumerate(tiles):
        for _, end, _ in tiles[i:]:
            if end - start <= max_frames_per_call:
                out.append((start, end, max(1, max_frames_per_call // (end - start)) if dense else 1))
    return out


def call_turn(start: float, end: float, fps: int) -> str:
    return f'<think>look</think><video_zoom>{{"segment": [{start:g}, {end:g}], "fps": {fps}}}</video_zoom>'


def answer_turn(letter: str) -> str:
    return f"<think>seen</think><answer>{letter}</answer>"


def _chat(apply_chat_template: Callable[..., str], text: str, video: bool) -> str:
    """The user turn ``text`` through the chat template, its ``<video>`` shown as Qwen's video markers (as
    EasyR1's dataset renders it) or dropped."""
    text = text.replace(VIDEO_PLACEHOLDER, QWEN_VIDEO if video else "")
    return apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)


class _Clips:
    """Decoded videos of a warm start, each decoded once: a row's whole video as the coarse pass samples it, and
    clips of it as the zoom pass does (the plan of Eq. 3 over the spans, one clip). Each is ``(frames, sample fps,
    metadata)``."""

    def __init__(self, shown: VideoInput):
        self.shown = shown
        self._cache: dict[tuple, tuple[Any, float, dict[str, Any]]] = {}

    def coarse(self, video: str) -> tuple[Any, float, dict[str, Any]]:
        key = (video,)
        if key not in self._cache:
            s = self.shown
            element = {"video": video, "fps": s.fps, "min_pixels": s.min_pixels, "max_pixels": s.max_pixels}
            clip = fetch_element(element, image_patch_size=fetch_patch_size(qwen_vl_utils_factor()))  # as EasyR1
            self._cache[key] = (clip.frames, clip.sample_fps, clip.metadata)
        return self._cache[key]

    def zoom(self, video: str, span: tuple[float, float], duration: float) -> tuple[Any, float, dict[str, Any]]:
        key = (video, span)
        if key not in self._cache:
            import torch

            plan = plan_pass([span], duration, self.shown.zoom)
            clips = fetch_plan(plan, video)
            frames = torch.cat([c.frames for c in clips])
            metadata = {**clips[0].metadata, "frames_indices": [i for c in clips for i in c.metadata["frames_indices"]]}
            self._cache[key] = (frames, frames.shape[0] / max(plan.seconds, 1e-6), metadata)
        return self._cache[key]


def _seen_square(rng: random.Random, row: Mapping[str, Any], truth: GroundTruth) -> tuple[tuple[float, float], str]:
    """A span inside one of the row's squares, and the letter of that square's colour."""
    start, end, colour = rng.choice(row_squares(row))
    inset = rng.uniform(0.0, (end - start) / 4)
    return (round(start + inset, 1), round(end - inset, 1)), colour_letter(truth, colour)


def grounded_examples(
    rows: Sequence[Mapping[str, Any]],
    n: int,
    apply_chat_template: Callable[..., str],
    zoom_style: str = "concise",
    seed: int = 0,
    shown: VideoInput | None = None,
    see: bool = False,
    whole_seconds: bool = False,
) -> list[Example]:
    """``n`` pairs over dataset ``rows`` (their own prompts, as the RL run shows them): the coarse pass's template
    with a random letter and span; every fourth pair the zoom pass's prompt in ``zoom_style`` over a random span,
    answered with a random letter. With ``shown``, each prompt shows its video as the rollout does (the whole video
    to the coarse pass, the span's clip to the zoom pass); else the prompts are text only.

    ``see`` (needs ``shown`` and rows with ``squares``): every other pair is the zoom pass's, showing the clip of one
    square and answering with its colour's letter — the perception a pretrained model brings (it names what a clip
    shows), never where to look or the coarse pass's answer. ``whole_seconds``: the coarse pass's spans as
    :func:`grounded_response` writes them with it."""
    if see and shown is None:
        raise ValueError("see=True teaches what a clip shows: it needs shown= (the videos)")
    rng = random.Random(seed)
    clips = _Clips(shown) if shown else None
    out = []
    for i in range(n):
        row = rows[i % len(rows)]
        truth = GroundTruth.parse(row["answer"])
        video = row["videos"][0]
        if (i % 2 == 1) if see else (i % 4 == 3):
            asked = zoom_prompt(truth.question, truth.options, style=zoom_style)
            prompt = _chat(apply_chat_template, asked, bool(clips))
            if see:
                span, letter = _seen_square(rng, row, truth)
            else:
                span, letter = _span(rng, truth.duration), LETTERS[rng.randrange(len(truth.options))]
            shows = clips.zoom(video, span, truth.duration) if clips else None
        else:
            prompt = _chat(apply_chat_template, row["prompt"], bool(clips))
            letter, shows = grounded_response(rng, truth, whole_seconds), clips.coarse(video) if clips else None
        if shows:
            out.append(Example(prompt, letter, videos=(shows[0],), video_fps=(shows[1],), video_metadata=(shows[2],)))
        else:
            out.append(Example(prompt, letter))
    return out


def _ran(call: str, video: Any, budget: AgentBudget, prompts: Any) -> Any:
    """The observation of ``call``'s clip as a fresh trajectory over ``video`` runs it (the call must run)."""
    step = Trajectory(video, budget, prompts).step(call)
    if step.observation is None or step.error is not None:
        raise ValueError(f"the warm start's call {call!r} does not run: {step.error}")
    return step.observation


def _answer_example(
    after: str, response: str, seen: tuple, clip: tuple, frames: Sequence[Any], info: Any, patch: int, as_video: bool
) -> Example:
    """An answer turn's example: the clip's frames as images after the overview's, or (``as_video``) as one video
    padded to whole temporal patches of ``patch`` frames."""
    if not as_video:
        return Example(after, response, seen + clip)
    timing = clip_video(frames, info, patch)
    shown = FrameVideo(clip + clip[-1:] * (len(timing.indices) - len(clip)), timing)
    return Example(after, response, seen, (shown.tensor(),), (timing.sample_fps,), (shown.metadata(),))


def agent_examples(
    rows: Sequence[Mapping[str, Any]],
    n: int,
    apply_chat_template: Callable[..., str],
    budget: AgentBudget | None = None,
    prompt: str = "train",
    parts: int = 3,
    seed: int = 0,
    tile: bool = False,
    see: bool = False,
    seen_answers: int = 0,
    dense: bool = False,
    unions: bool = False,
    clip_as: str = "images",
    temporal_patch: int = 2,
) -> list[Example]:
    """``n`` examples over dataset ``rows`` (videos and answer JSON) as the VideoZoomer rollout renders them (the
    agent's ``prompt`` variant, ``budget``, ``clip_as``: labelled images, or one video padded to whole temporal patches
    of ``temporal_patch`` frames), in pairs: the first prompt answered with a call on one of :func:`call_segments`
    (``parts``, ``tile``, ``dense``) drawn at random, then the prompt after that call's clip answered with a random
    letter. ``see`` (rows with ``squares``): where the clip shows squares of one colour only, the answer names that
    colour — the perception a pretrained model brings, never where to look: the call stays random, and a clip of the
    wrong square is answered with its colour. ``seen_answers`` (with ``see``): after each pair, this many more answer
    turns after calls drawn among the segments whose clip shows one colour (in the prompt, not taught): where most
    thirds show no square, the answer turn still learns to name colours; the calls taught stay the pairs' own.
    ``unions`` (with ``tile``): the seen answers' calls drawn among :func:`tile_unions` (``[0, 8]``, ``[0, 12]``…)."""
    if unions and not (tile and see and seen_answers):
        raise ValueError("agent_examples: unions needs tile, see and seen_answers (they are the seen answers' calls)")
    budget = budget or AgentBudget()
    video_clips = check_clip_as(clip_as) == "video"
    prompts = get_prompts(prompt)
    rng = random.Random(seed)
    looks = random.Random(-1 - seed)  # the seen answers' draws: the pairs are those made without them
    readers = {row["videos"][0]: FrameReader(row["videos"][0]) for row in rows}
    decoded: dict[tuple[str, int], Any] = {}

    def images(video: str, frames: Iterable[int]) -> tuple[Any, ...]:
        missing = [f for f in frames if (video, f) not in decoded]
        read = readers[video].read(missing, budget.max_frame_pixels, budget.min_frame_pixels)
        decoded.update({(video, f): image for f, image in zip(missing, read)})
        return tuple(decoded[video, f] for f in frames)

    out: list[Example] = []
    i = 0
    while len(out) < n:
        row = rows[i % len(rows)]
        i += 1
        truth = GroundTruth.parse(row["answer"])
        video = row["videos"][0]
        info = readers[video].info
        trajectory = Trajectory(info, budget, prompts)
        user = trajectory.user_parts(question_text(truth.question, truth.options))
        first = first_prompt(apply_chat_template, prompts.system, user, QWEN_IMAGE)
        seen = images(video, [f.frame for f in trajectory.overview])

        def colour_of(frames: Sequence[Any]) -> str | None:
            """The letter of the one colour a clip's ``frames`` show (None: no square, or more than one colour)."""
            return clip_letter(row, truth, [f.time for f in frames])

        def answered(call: str, letter: str | None) -> Example:
            """The answer turn after ``call``'s clip: the clip's one colour with ``see``, else ``letter``."""
            observation = _ran(call, info, budget, prompts)
            frames = observation.frames
            after = prompt_text(first, [(call, observation_text(observation, clip_as))])
            letter = (colour_of(frames) if see else None) or letter
            clip = images(video, [f.frame for f in frames])
            return _answer_example(after, answer_turn(letter), seen, clip, frames, info, temporal_patch, video_clips)

        spans = call_segments(info.duration, budget.max_frames_per_call, parts, tile, dense)
        segments = [call_turn(*s) for s in spans]
        call = rng.choice(segments)
        letter = LETTERS[rng.randrange(len(truth.options))]  # drawn with see too: the same calls either way
        out += [Example(first, call, seen), answered(call, letter)]
        looked = tile_unions(spans, budget.max_frames_per_call, dense) if unions else spans  # seen answers' calls
        looks_at = [call_turn(*s) for s in looked] if see and seen_answers else []  # those whose clip shows one colour
        one_colour = [c for c in looks_at if colour_of(_ran(c, info, budget, prompts).frames)]
        out += [answered(looks.choice(one_colour), None) for _ in range(seen_answers if one_colour else 0)]
    return out[:n]


def warm_start(
    model_dir: str | Path,
    out_dir: str | Path,
    rows: Sequence[Mapping[str, Any]],
    kind: str,
    n: int = 256,
    steps: int = 120,
    batch_size: int = 16,
    lr: float = 3e-3,
    seed: int = 0,
    schedule: str = "constant",
    **options: Any,
) -> Path:
    """Teach the model in ``model_dir`` the ``kind`` format (``grounded`` or ``agent``) on ``n`` examples over
    ``rows`` (``options`` go to :func:`grounded_examples` / :func:`agent_examples`; ``schedule``: the learning rate's,
    :data:`SCHEDULES`) and save it, with its processor, to ``out_dir``. Returns ``out_dir``."""
    import torch
    from transformers import AutoProcessor

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    processor = AutoProcessor.from_pretrained(model_dir, use_fast=True)
    examples = (grounded_examples if kind == "grounded" else agent_examples)(
        rows, n, processor.tokenizer.apply_chat_template, seed=seed, **options
    )
    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-wide model: threads only wait on each other (10x slower on a busy machine)
    try:
        model = train_steps(model_dir, processor, examples, steps, batch_size, lr, seed, schedule)
    finally:
        torch.set_num_threads(threads)
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    return out_dir


GROUNDED_ASK = "Answer, then cite the time spans."  # unlike the zoom pass's "Respond with only the letter…"


def short_prompts(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with each prompt replaced by the ``<video>`` question and options and :data:`GROUNDED_ASK`: what a
    warm-started tiny model reads fastest in Zoom-Zero's coarse pass (the agent writes its own prompts)."""
    out = []
    for row in rows:
        truth = GroundTruth.parse(row["answer"])
        out.append({**row, "prompt": question_text(truth.question, truth.options) + f"\n{GROUNDED_ASK}"})
    return out
