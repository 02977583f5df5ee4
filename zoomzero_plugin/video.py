"""Decoding the frames a plan asks for, through qwen-vl-utils (sampling, time ranges and resizing)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
from dataclasses import dataclass
from typing import Any

import torch

from .cpu_compat import ensure_torchvision_importable
from .zoom import ZoomPlan


@dataclass
class DecodedClip:
    """Frames of one clip as qwen-vl-utils returns them, ready for a Qwen-VL processor."""

    frames: torch.Tensor  # (T, 3, H, W) float, already resized
    sample_fps: float
    metadata: dict[str, Any]
    element: dict[str, Any]

    @property
    def frame_pixels(self) -> int:
        return int(self.frames.shape[-1] * self.frames.shape[-2])


def _qwen_vl_utils():
    # qwen-vl-utils picks its backend at import; prefer decord where torchcodec is absent or unusable.
    if "qwen_vl_utils" not in sys.modules:
        ensure_torchvision_importable()
        if os.environ.get("FORCE_QWENVL_VIDEO_READER") is None and _has("decord") and not _has("torchcodec"):
            os.environ["FORCE_QWENVL_VIDEO_READER"] = "decord"
    import qwen_vl_utils

    with contextlib.redirect_stderr(io.StringIO()):  # its one-time "qwen-vl-utils using decord to read video."
        qwen_vl_utils.vision_process.get_video_reader_backend()
    return qwen_vl_utils


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def fetch_element(element: dict[str, Any], image_patch_size: int = 14) -> DecodedClip:
    """Decode one qwen-vl-utils video element (``video``, ``video_start``/``video_end``, ``nframes``…)."""
    qvu = _qwen_vl_utils()
    (frames, metadata), sample_fps = qvu.fetch_video(
        dict(element), image_patch_size=image_patch_size, return_video_sample_fps=True, return_video_metadata=True
    )
    return DecodedClip(frames=frames, sample_fps=float(sample_fps), metadata=dict(metadata), element=dict(element))


def fetch_plan(plan: ZoomPlan, video: str) -> list[DecodedClip]:
    """Decode every clip of ``plan`` from ``video``; only frames inside the clips are read."""
    patch = plan.budget.factor // 2
    return [fetch_element(e, image_patch_size=patch) for e in plan.video_elements(video)]


def probe_duration(path: str) -> float:
    """Duration in seconds as the decoder sees it (frames / average fps). Raises on unreadable files."""
    import decord

    reader = decord.VideoReader(str(path))
    fps = reader.get_avg_fps()
    if not fps or fps <= 0:
        raise ValueError(f"{path}: decoder reports no frame rate")
    return len(reader) / fps
