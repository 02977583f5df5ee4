"""Clip specs: a ``multi_modal_data`` video entry that names time ranges instead of a whole file.

A clip spec is a plain dict (it travels through Ray and ``DataProto`` like a path)::

    {"video": "/data/v.mp4", "image_patch_size": 16,
     "clips": [{"video": "/data/v.mp4", "video_start": 3.0, "video_end": 5.0, "nframes": 4,
                "min_pixels": …, "max_pixels": …, "total_pixels": …}, …]}

Each clip is a qwen-vl-utils ``fetch_video`` element (a plugin's plan makes them: Zoom-Zero's zoom pass,
``ZoomPlan.video_elements``), so only frames inside the ranges are decoded, at the pass's own pixel limits. The clips'
frames are concatenated in time order into one video (vLLM accepts one video per prompt by default); later clips are
resized to the first clip's frame size. EasyR1's ``process_video`` is wrapped to accept such a dict (and a video
reference, :mod:`.video_refs`) wherever it reads videos, and to record each decoded video's sample rate for the
rollout engine.

Decoding once, in parallel: every video, whole or clipped, is read through the process's
:class:`~zoomzero_plugin.video_store.VideoStore` (each video opened once per process, each native frame decoded once:
the zoom pass reuses the coarse pass's readers and frames). EasyR1's rollout decodes a batch's videos one after the
other; :func:`prefetch_videos` (called by the worker's ``generate_sequences`` seam) starts every row's decode in
the decode threads first, and ``process_video`` then takes each result as EasyR1 asks for it, in its own order.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from zoomzero_plugin.video import fetch_clips, use_video_store
from zoomzero_plugin.video_store import decode_pool

from .video_refs import decode_video_ref, is_video_ref
from .vllm_engine import record_sample_fps

CLIPS = "clips"


def make_clip_spec(video: str, clips: Sequence[Mapping[str, Any]], image_patch_size: int) -> dict[str, Any]:
    """The clip spec of ``clips`` (qwen-vl-utils video elements over ``video``, in time order), decoded with the
    model's ``image_patch_size`` (in qwen-vl-utils' sense: ``VisionGeometry.fetch_patch_size``)."""
    return {"video": str(video), "image_patch_size": int(image_patch_size), CLIPS: [dict(c) for c in clips]}


def is_clip_spec(video: Any) -> bool:
    return isinstance(video, Mapping) and isinstance(video.get(CLIPS), (list, tuple))


def decode_clip_spec(spec: Mapping[str, Any], return_fps: bool = False, return_metadata: bool = False):
    """Decode a clip spec like EasyR1's ``process_video`` decodes a path.

    Returns frames ``(T, 3, H, W)`` float; ``(frames, metadata)`` with ``return_metadata``; and that
    value paired with the sample fps with ``return_fps`` (qwen-vl-utils' own return convention).
    ``metadata["frames_indices"]`` are absolute source frame indices, so timestamps stay true.
    """
    elements = list(spec[CLIPS])
    if not elements:
        raise ValueError(f"clip spec for {spec.get('video')!r} has no clips")
    patch = spec.get("image_patch_size")
    if patch is None:
        raise ValueError(f"clip spec for {spec.get('video')!r} has no image_patch_size (make it with make_clip_spec)")
    joined = fetch_clips(elements, int(patch))
    sample_fps = joined.sample_fps
    out: Any = (joined.frames, joined.metadata) if return_metadata else joined.frames
    return (out, sample_fps) if return_fps else out


_FLAGS = ("min_pixels", "max_pixels", "video_fps", "return_fps", "return_metadata")
_PREFETCHED: dict[tuple, Future] = {}  # (video, min_pixels, max_pixels, video_fps, return_metadata) -> (value, fps)
_PREFETCH_LOCK = threading.Lock()


def _key(video: Any, flags: Mapping[str, Any]) -> tuple:
    name = json.dumps(video, sort_keys=True, default=str) if is_clip_spec(video) else str(video)
    return (
        name,
        flags.get("min_pixels"),
        flags.get("max_pixels"),
        flags.get("video_fps"),
        bool(flags.get("return_metadata")),
    )


def prefetch_videos(
    multi_modal_data: Sequence[Any], min_pixels: Any, max_pixels: Any, video_fps: Any, return_metadata: bool = False
) -> int:
    """Start decoding every video of a batch's rows in the decode threads, as EasyR1's rollout will ask
    ``process_video`` for them (the flags of its call); returns how many were started. Each result is taken once;
    :func:`drop_prefetched` forgets what no call took."""
    from verl.utils import dataset  # its process_video: this seam's wrapper

    decode = getattr(dataset.process_video, "decode", None)
    if decode is None:  # the seam is not in place in this process: EasyR1 decodes as it always does
        return 0
    flags = {"min_pixels": min_pixels, "max_pixels": max_pixels, "video_fps": video_fps}
    if return_metadata:
        flags["return_metadata"] = True
    started = 0
    for media in multi_modal_data:
        for video in (media or {}).get("videos") or []:
            key = _key(video, flags)
            with _PREFETCH_LOCK:
                if key in _PREFETCHED:
                    continue
                _PREFETCHED[key] = decode_pool().submit(decode, video, flags)
            started += 1
    return started


def drop_prefetched() -> None:
    with _PREFETCH_LOCK:
        _PREFETCHED.clear()


def wrap_process_video(original: Callable) -> Callable:
    """EasyR1's ``process_video(video, min_pixels, max_pixels, video_fps, return_fps=False[, return_metadata])``
    that also decodes clip specs and video references, reads through the process's video store, takes a prefetched
    result when there is one, and records the sample rate and, where the decoder gives it, the metadata of every frame
    tensor it returns (:func:`~.vllm_engine.record_sample_fps`: the rollout engine passes the rate on to vLLM, the
    dataset the metadata to Qwen3-VL's processor, :mod:`.dataset_videos`)."""
    metadata_known = "return_metadata" in inspect.signature(original).parameters  # EasyR1 main: qwen-vl-utils' own

    def decode(video: Any, flags: Mapping[str, Any]) -> tuple[Any, float]:
        """(what process_video returns, sample fps) for ``video`` and the call's flags, with the metadata where it is
        known (``(frames, metadata)``; a video reference always has it, see video_refs)."""
        if is_clip_spec(video):  # the spec carries its own pixel limits and rates
            return decode_clip_spec(video, return_fps=True, return_metadata=True)
        if is_video_ref(video):  # so does a video reference
            return decode_video_ref(video, return_fps=True, return_metadata=True)
        use_video_store()
        if metadata_known:
            return original(video, **{**flags, "return_metadata": True}, return_fps=True)
        return original(video, **flags, return_fps=True)

    def process_video(video, *args, **kwargs):
        flags = dict(zip(_FLAGS, args))
        flags.update(kwargs)
        want_fps = bool(flags.pop("return_fps", False))
        with _PREFETCH_LOCK:
            prefetched = _PREFETCHED.pop(_key(video, flags), None)
        value, fps = prefetched.result() if prefetched is not None else decode(video, flags)
        frames, metadata = value if isinstance(value, tuple) else (value, None)
        record_sample_fps(frames, fps, metadata)
        if isinstance(value, tuple) and not flags.get("return_metadata") and not is_video_ref(video):
            value = frames  # asked without metadata: as EasyR1's own returns it
        return (value, fps) if want_fps else value

    process_video.decode = decode  # for prefetch_videos
    return process_video
