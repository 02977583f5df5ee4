"""The one interface every inference backend implements: requests in, generations out.

A :class:`Request` is a prompt with one ``<video>`` placeholder plus the qwen-vl-utils video elements
that go there (``ZoomPlan.video_elements``: one element per clip, decoded through
:mod:`zoomzero_plugin.video`). A backend returns one :class:`Generation` per request: the sampled
texts, optionally the log-probability of every generated token, what was decoded (clips, frames,
video tokens) and how long each step took.

A *formatted* request (the agent's) carries the whole chat-formatted prompt text, with one
``<|vision_start|><|image_pad|><|vision_end|>`` per image, and its ``images`` in order; it is sent as is. Its clips
shown as videos (``clip_videos``: the agent's ``clip_as: video``) each hold one ``<|vision_start|><|video_pad|>
<|vision_end|>`` in order, timed by their own frames' indices and rate (:class:`FrameVideo`). One with ``frames`` (the
no-tool baseline's) holds one video placeholder instead: the frames are one video, resized by the processor's own
rule like images (and timed at its default rate).

A request with ``choices`` (option letters) is not generated freely: the backend scores the next
token after the prompt and answers with the most probable choice, as the Zoom-Zero authors' fine
pass does ("Respond with only the letter of the option" judged by the next-token argmax).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..agent.clips import ClipVideo
from ..errors import DependencyError, ModelError, UsageError, ZoomzeroError
from ..hub import FOLDER, locate
from ..question import VIDEO_PLACEHOLDER
from ..video import DecodedClip, fetch_element
from ..vision import VisionGeometry


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. ``temperature == 0`` is greedy decoding."""

    max_new_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1  # samples per request
    seed: int = 0  # seeds the sampler at every call, so a resumed run samples what the full run would
    logprobs: bool = False  # return each generated token's log-probability
    stop: tuple[str, ...] = ()  # generation of a sample ends after the first of these strings (kept in its text)

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1 or self.n < 1 or self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError(f"invalid sampling parameters: {self}")
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ValueError(f"stop strings must be non-empty strings: {self.stop!r}")


@dataclass(frozen=True)
class FrameVideo:
    """Decoded frames (PIL, padded to whole temporal patches) shown as one video, with their timing."""

    frames: tuple[Any, ...]
    timing: ClipVideo

    def tensor(self) -> Any:
        """The frames as one ``(T, 3, H, W)`` uint8 tensor."""
        import numpy as np
        import torch

        return torch.from_numpy(np.stack([np.asarray(f.convert("RGB")) for f in self.frames])).permute(0, 3, 1, 2)

    def metadata(self) -> dict[str, Any]:
        return self.timing.metadata(self.frames[0].height, self.frames[0].width)


def frame_video_kwargs(videos: Sequence[FrameVideo]) -> dict[str, Any]:
    """Processor keyword arguments for clips of decoded frames shown as videos: the frames (resized by the
    processor's own rule, as images are), their metadata (Qwen3-VL's timestamps), no second frame sampling, and
    where the processor takes it (:func:`takes_fps_kwarg`) each clip's own rate (Qwen2.5-VL's M-RoPE time)."""
    kwargs: dict[str, Any] = {
        "videos": [v.tensor() for v in videos],
        "video_metadata": [v.metadata() for v in videos],
        "do_sample_frames": False,
    }
    if takes_fps_kwarg():
        kwargs["fps"] = [v.timing.sample_fps for v in videos]
    return kwargs


@dataclass(frozen=True)
class Request:
    """One prompt. Every video element replaces the prompt's ``<video>`` placeholder, in order."""

    prompt: str
    videos: tuple[dict[str, Any], ...] = ()
    choices: tuple[str, ...] = ()  # single-token answers to score instead of generating (e.g. "A".."E")
    images: tuple[Any, ...] = ()  # PIL images of a formatted prompt, in placeholder order
    formatted: bool = False  # ``prompt`` already went through the chat template: send it as is
    tag: str = ""  # the caller's label (the agent: "qid#round"); backends ignore it
    frames: tuple[Any, ...] = ()  # PIL frames of the one video of a formatted prompt
    clip_videos: tuple[FrameVideo, ...] = ()  # a formatted prompt's clips shown as videos, in placeholder order

    def __post_init__(self) -> None:
        if not self.formatted and self.prompt.count(VIDEO_PLACEHOLDER) > 1:
            raise ValueError("a request prompt holds at most one <video> placeholder (all clips go there)")
        if (self.images or self.frames or self.clip_videos) and not self.formatted:
            raise ValueError("images, frames and clip videos go with a formatted prompt (formatted=True)")
        if sum(map(bool, (self.images or self.clip_videos, self.videos, self.frames))) > 1:
            raise ValueError("a request holds images (and clip videos), videos or frames, only one of them")


@dataclass
class Output:
    """One sample. Offsets are the (n+1) character boundaries of the tokens in ``text``."""

    text: str
    token_ids: list[int]
    token_logprobs: list[float] | None = None
    token_offsets: list[int] | None = None
    choice_logprobs: dict[str, float] | None = None  # log p(choice) over the full vocabulary


@dataclass
class ClipStats:
    """What was decoded for one clip: the requested range and the frames actually read."""

    start: float  # requested range, seconds
    end: float
    frames: int
    first: float  # time of the first and last decoded frame, seconds
    last: float
    height: int
    width: int

    def to_list(self) -> list[float]:
        return [
            round(self.start, 3),
            round(self.end, 3),
            self.frames,
            round(self.first, 3),
            round(self.last, 3),
            self.height,
            self.width,
        ]


@dataclass
class Generation:
    """A backend's answer to one request."""

    outputs: list[Output]
    clips: list[ClipStats] = field(default_factory=list)
    prompt_tokens: int = 0  # text + video/image tokens the model read
    video_tokens: int = 0
    image_tokens: int = 0
    timing: dict[str, float] = field(default_factory=dict)  # decode_s, prepare_s, generate_s (share of the batch)

    @property
    def text(self) -> str:
        return self.outputs[0].text

    @property
    def frames(self) -> int:
        return sum(c.frames for c in self.clips)


@runtime_checkable
class Backend(Protocol):
    """Anything that turns requests into generations. ``geometry`` is the model's vision geometry (read from its
    processor: pixels per token side, which zoom budgets must use; ``geometry.timestamps``: the model reads each
    frame's time in the video as text (Qwen3-VL), so a clip is seen at its true seconds, where with Qwen2/2.5-VL
    time restarts at every clip)."""

    name: str
    geometry: VisionGeometry

    def generate(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]: ...


def open_stream(backend: Backend, params: SamplingParams) -> Any:
    """The backend's request-level stream (continuous batching: ``submit([(key, Request)])``, ``step()`` ->
    ``[(key, Generation)]``, ``pending``, ``close()``), or None for a backend that only generates whole batches."""
    make = getattr(backend, "stream", None)
    return make(params) if make is not None else None


BACKENDS: dict[str, str] = {
    "transformers": "zoomzero_plugin.inference.hf_backend:TransformersBackend",
    "vllm": "zoomzero_plugin.inference.vllm_backend:VLLMBackend",
}


def check_model(model: str, timeout: float = 10.0) -> str:
    """Where ``model`` comes from, checked at once (before any video is decoded or weights are read).

    A local folder must hold ``config.json``; anything else that exists, or looks like a path, is an
    error. A Hugging Face hub id must be in the local cache or, online, known to the hub (one request,
    ``timeout`` seconds); offline (``HF_HUB_OFFLINE``) or unreachable, it is an error at once instead of
    minutes of retries (:func:`zoomzero_plugin.hub.locate`). Returns the local folder or the hub id. Raises
    :class:`ModelError`.
    """
    try:
        where = locate(model, timeout)
    except ModelError as e:
        raise ModelError(f"--model {model}: {e}") from None
    return str(Path(model).expanduser()) if where == FOLDER else model


def load_backend(name: str, model: str, **kwargs: Any) -> Backend:
    """Build the backend ``name`` for ``model``; only that backend's libraries are imported.

    ``model`` is checked first (:func:`check_model`); a model that still fails to load raises ModelError.
    """
    if name not in BACKENDS:
        raise UsageError(f"unknown backend {name!r}; choose from {sorted(BACKENDS)}")
    needs_vllm = DependencyError(
        "--backend vllm needs vLLM, which is not installed here: install it as vLLM's docs say for your GPU "
        "(it brings its own torch), then zoomzero-plugin next to it (from a clone: pip install .); "
        "--backend transformers runs anywhere"
    )
    if name == "vllm" and "vllm" not in sys.modules and importlib.util.find_spec("vllm") is None:
        raise needs_vllm
    module, cls = BACKENDS[name].split(":")
    backend = getattr(importlib.import_module(module), cls)
    if kwargs.get("model_obj") is None:
        model = check_model(model)
    try:
        return backend(model, **kwargs)
    except ModuleNotFoundError as e:
        if name == "vllm" and e.name and e.name.split(".")[0] == "vllm":
            raise needs_vllm from e
        raise
    except (OSError, ValueError, KeyError) as e:  # a folder or hub repo that is not a loadable Qwen-VL model
        if isinstance(e, ZoomzeroError):
            raise
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        raise ModelError(
            f"--model {model}: cannot load it with the {name} backend ({type(e).__name__}: {first})"
        ) from e


def split_prompt(prompt: str) -> tuple[str, str]:
    """Text before and after the ``<video>`` placeholder (videos first when there is none)."""
    before, sep, after = prompt.partition(VIDEO_PLACEHOLDER)
    return (before, after) if sep else ("", prompt)


def chat_messages(request: Request) -> list[dict[str, Any]]:
    """The user turn as a Qwen-VL chat message: text, then one video item per clip, then text."""
    before, after = split_prompt(request.prompt)
    content: list[dict[str, Any]] = []
    if before:
        content.append({"type": "text", "text": before})
    content += [{"type": "video", "video": element["video"]} for element in request.videos]
    if after:
        content.append({"type": "text", "text": after})
    return [{"role": "user", "content": content}]


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to and including the earliest of the ``stop`` strings (unchanged when none occurs)."""
    ends = [i + len(s) for s in stop if (i := text.find(s)) >= 0]
    return text[: min(ends)] if ends else text


def decode_videos(request: Request, geometry: VisionGeometry) -> tuple[list[DecodedClip], list[ClipStats], float]:
    """Decode a request's clips through qwen-vl-utils on the model's token grid; returns the clips, their stats
    and the seconds taken."""
    start = time.perf_counter()
    patch = geometry.fetch_patch_size()
    clips = [fetch_element(element, image_patch_size=patch) for element in request.videos]
    stats = []
    for clip in clips:
        fps = float(clip.metadata.get("fps") or 0.0)
        indices = list(clip.metadata.get("frames_indices") or [])
        first, last = (indices[0] / fps, indices[-1] / fps) if indices and fps > 0 else (float("nan"),) * 2
        stats.append(
            ClipStats(
                start=float(clip.element.get("video_start", 0.0)),
                end=float(clip.element.get("video_end", last)),
                frames=int(clip.frames.shape[0]),
                first=first,
                last=last,
                height=int(clip.frames.shape[-2]),
                width=int(clip.frames.shape[-1]),
            )
        )
    return clips, stats, time.perf_counter() - start


def clip_kwargs(clips: Sequence[DecodedClip]) -> dict[str, Any]:
    """Processor keyword arguments for clips qwen-vl-utils decoded (:func:`decode_videos`): the frames as they are
    (already on the token grid: no resize, no second sampling), the decoder's metadata (absolute frame indices and
    the native rate: Qwen3-VL's timestamps) and, where the processor takes it (:func:`takes_fps_kwarg`), each clip's
    sample rate (Qwen2.5-VL's ``second_per_grid_ts``)."""
    kwargs: dict[str, Any] = {
        "videos": [c.frames for c in clips],
        "video_metadata": [c.metadata for c in clips],
        "do_resize": False,
        "do_sample_frames": False,
    }
    if takes_fps_kwarg():
        kwargs["fps"] = [c.sample_fps for c in clips]
    return kwargs


def takes_fps_kwarg() -> bool:
    """Whether Qwen-VL processors take each clip's sample rate as an ``fps`` kwarg, one per clip (transformers
    < 5, where it is the only way to set a clip's timing) rather than from each clip's metadata (transformers
    >= 5, which refuses a list-valued ``fps``; so do the vLLM versions built on it, 0.19 on)."""
    import transformers

    return int(transformers.__version__.split(".")[0]) < 5
