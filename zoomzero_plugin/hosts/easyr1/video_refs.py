"""Video references: a ``multi_modal_data`` video that names frames of a video file, to be shown as one video.

A multi-turn rollout may show a clip as one video (VideoZoomer's ``clip_as: video``) instead of separate images. Its
reference is a few numbers, like a frame reference (:mod:`.frame_refs`)::

    {"video": "/data/v.mp4", "frames": [40, 42, 44, 44], "fps": 20.0, "sample_fps": 10.0, "total_frames": 240,
     "max_pixels": 100352, "min_pixels": 25088, "group": "/data/v.mp4|40,42,44,44|100352|25088"}

``frames`` are native frame indices in order (the plugin pads them to a multiple of the model's temporal patch by
repeating the last, as Qwen's processors do), ``fps`` the file's native rate (a frame's time is its index / fps:
Qwen3-VL writes these times into the prompt), ``sample_fps`` the clip's own rate (Qwen2.5-VL's time-aligned M-RoPE:
``second_per_grid_t = temporal_patch / sample_fps``). EasyR1's ``process_video`` is wrapped
(:func:`~.clips.wrap_process_video`) to decode it through the installed frame cache (one batched read of the group,
shared with the frame references of the same frames), so the engine and the actor see the same pixels; the sample
rate is recorded for the engine (:func:`~.vllm_engine.record_sample_fps`), and the frames always come with their
metadata (absolute indices, native rate) as ``(frames, metadata)``, the pair vLLM's Qwen-VL processors take: Qwen3-VL
needs it for its timestamps, and EasyR1 v0.3.2 never asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from . import frame_refs

VIDEO_REF_KEYS = ("video", "frames", "fps", "sample_fps", "total_frames")


def video_ref(
    video: str,
    frames: Sequence[int],
    fps: float,
    sample_fps: float,
    total_frames: int,
    max_pixels: int,
    min_pixels: int,
) -> dict[str, Any]:
    """The reference to native frames ``frames`` of ``video`` (``fps`` native, ``total_frames`` in all) shown as
    one video sampled at ``sample_fps``, each frame within the pixel limits."""
    frames = [int(f) for f in frames]
    if not frames:
        raise ValueError(f"a video reference to {video!r} needs at least one frame")
    return {
        "video": str(video),
        "frames": frames,
        "fps": float(fps),
        "sample_fps": float(sample_fps),
        "total_frames": int(total_frames),
        "max_pixels": int(max_pixels),
        "min_pixels": int(min_pixels),
        "group": frame_refs.group_key(video, frames, max_pixels, min_pixels),
    }


def is_video_ref(video: Any) -> bool:
    return isinstance(video, Mapping) and all(k in video for k in VIDEO_REF_KEYS) and "pick" not in video


def video_metadata(ref: Mapping[str, Any], height: int, width: int) -> dict[str, Any]:
    """The decoder metadata of a reference's frames (transformers' ``VideoMetadata`` fields)."""
    return {
        "total_num_frames": int(ref["total_frames"]),
        "fps": float(ref["fps"]),
        "frames_indices": list(ref["frames"]),
        "duration": int(ref["total_frames"]) / float(ref["fps"]),
        "height": int(height),
        "width": int(width),
    }


def decode_video_ref(ref: Mapping[str, Any], return_fps: bool = False, return_metadata: bool = False) -> Any:
    """The frames ``(T, 3, H, W)`` uint8 a reference names (through the installed frame cache); ``(frames,
    metadata)`` with ``return_metadata``; that paired with the sample rate with ``return_fps`` (qwen-vl-utils' own
    return convention, as EasyR1's ``process_video`` returns it)."""
    cache = frame_refs.installed()
    if cache is None:
        raise RuntimeError(
            f"a video reference to {ref['video']!r} reached EasyR1's process_video, but no plugin "
            "installed a frame cache in this process (frame_refs.install)"
        )
    images = cache.group(ref["video"], ref["frames"], ref["max_pixels"], ref["min_pixels"], ref.get("group"))
    frames = torch.from_numpy(np.stack([np.asarray(im.convert("RGB")) for im in images])).permute(0, 3, 1, 2)
    out: Any = frames
    if return_metadata:
        out = (frames, video_metadata(ref, frames.shape[-2], frames.shape[-1]))
    return (out, float(ref["sample_fps"])) if return_fps else out
