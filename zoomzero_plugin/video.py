"""Decoding the frames a clip element asks for, through qwen-vl-utils (sampling, time ranges and resizing).

qwen-vl-utils' decord reader reads local files through the process's
:class:`~zoomzero_plugin.video_store.VideoStore` once this module has loaded qwen-vl-utils (:func:`use_video_store`):
each video is opened once and each native frame decoded once, for every ``fetch_video`` in the process (EasyR1's
``process_video`` included). The frames it returns, and so every pixel qwen-vl-utils resizes from them, are the ones
its own reader returns; which frames, their times and the resizing stay qwen-vl-utils' own.

A video that cannot be decoded raises :class:`~zoomzero_plugin.errors.VideoError` naming the file and the
decoder's own reason. (qwen-vl-utils retries a failed decord read with torchvision, whose error, e.g.
``module 'torchvision.io' has no attribute 'read_video'``, would otherwise hide decord's.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .cpu_compat import ensure_torchvision_importable
from .errors import VideoError
from .video_store import shared

if TYPE_CHECKING:
    import torch


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

    logging.getLogger("qwen_vl_utils.vision_process").addFilter(_hide_fallback_notice)
    with contextlib.redirect_stderr(io.StringIO()):  # its one-time "qwen-vl-utils using decord to read video."
        qwen_vl_utils.vision_process.get_video_reader_backend()
    use_video_store()
    return qwen_vl_utils


_STORE_READER = "_zoomzero_video_store"  # marks qwen-vl-utils' decord reader once it reads through the store


def use_video_store() -> None:
    """Make qwen-vl-utils' decord reader (``VIDEO_READER_BACKENDS["decord"]``, looked up at every ``fetch_video``)
    read local files through :func:`~zoomzero_plugin.video_store.shared`; URLs still go to its own reader.
    Idempotent."""
    import qwen_vl_utils.vision_process as vp

    original = vp.VIDEO_READER_BACKENDS.get("decord")
    if original is None or getattr(original, _STORE_READER, False):
        return

    def read_video_decord(ele: dict[str, Any]):
        path = ele["video"]
        if not isinstance(path, str) or ("://" in path and not path.startswith("file://")):
            return original(ele)
        path = path.removeprefix("file://")
        store = shared()
        frames, fps = store.info(path)
        start, end, total = vp.calculate_video_frame_range(ele, frames, fps)
        nframes = vp.smart_nframes(ele, total_frames=total, video_fps=fps)
        import torch

        indices = torch.linspace(start, end, nframes).round().long().tolist()
        video = torch.tensor(store.frames(path, indices)).permute(0, 3, 1, 2)  # (T, C, H, W), as qwen-vl-utils lays it
        metadata = {"fps": fps, "frames_indices": indices, "total_num_frames": total, "video_backend": "decord"}
        return video, metadata, nframes / max(total, 1e-6) * fps

    setattr(read_video_decord, _STORE_READER, True)
    read_video_decord.original = original  # type: ignore[attr-defined]
    vp.VIDEO_READER_BACKENDS["decord"] = read_video_decord


def _hide_fallback_notice(record: logging.LogRecord) -> bool:
    # "video_reader_backend decord error, use torchvision as default": the VideoError says it better
    return not str(record.msg).startswith("video_reader_backend")


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def check_video_file(video: str) -> None:
    """Raise VideoError if a local video path is missing, a folder or empty (URLs are not checked)."""
    if "://" in video and not video.startswith("file://"):
        return
    path = video.removeprefix("file://")
    if not os.path.exists(path):
        raise VideoError(f"{path}: no such video file")
    if os.path.isdir(path):
        raise VideoError(f"{path}: a folder, not a video file")
    if os.path.getsize(path) == 0:
        raise VideoError(f"{path}: an empty file (0 bytes), not a video")


def decoder_reason(error: BaseException) -> str:
    """The first decoder's error behind ``error``, one line: ``"DECORDError: …"``.

    qwen-vl-utils calls its torchvision fallback inside the ``except`` that caught the first backend's
    error, so that error is the ``__context__`` at the bottom of the chain.
    """
    root, seen = error, set()
    while root.__context__ is not None and id(root) not in seen:
        seen.add(id(root))
        root = root.__context__
    lines = [line.strip() for line in str(root).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    return f"{type(root).__name__}: {text[:300]}" if text else type(root).__name__


def ffmpeg_reason(video: str) -> str | None:
    """FFmpeg's own words for why a local file does not open (e.g. "moov atom not found" shows as
    "Invalid data found when processing input"), via PyAV; None if it opens or cannot be asked."""
    if "://" in video and not video.startswith("file://"):
        return None
    try:
        import av

        with av.open(video.removeprefix("file://")) as container:
            container.streams.video[0]
    except ImportError:
        return None
    except Exception as e:  # noqa: BLE001
        text = getattr(e, "strerror", None) or str(e)
        return str(text).splitlines()[0][:200] if text else type(e).__name__
    return None


def fetch_element(element: dict[str, Any], image_patch_size: int) -> DecodedClip:
    """Decode one qwen-vl-utils video element (``video``, ``video_start``/``video_end``, ``nframes``…), sized on the
    token grid of ``image_patch_size`` (the model's: :meth:`~zoomzero_plugin.vision.VisionGeometry.fetch_patch_size`).

    Raises VideoError naming the file when it is missing, empty or cannot be decoded.
    """
    video = str(element.get("video", ""))
    check_video_file(video)
    qvu = _qwen_vl_utils()
    try:
        (frames, metadata), sample_fps = qvu.fetch_video(
            dict(element), image_patch_size=image_patch_size, return_video_sample_fps=True, return_video_metadata=True
        )
    except Exception as e:  # noqa: BLE001  (any decoder failure is the file's fault, named as such)
        ffmpeg = ffmpeg_reason(video)
        backend = getattr(sys.modules.get("qwen_vl_utils.vision_process"), "get_video_reader_backend", lambda: "")()
        detail = (f"{backend}: " if backend else "") + decoder_reason(e) + (f"; FFmpeg: {ffmpeg}" if ffmpeg else "")
        raise VideoError(f"{video}: cannot decode it ({detail})") from e
    return DecodedClip(frames=frames, sample_fps=float(sample_fps), metadata=dict(metadata), element=dict(element))


def probe_duration(path: str) -> float:
    """Duration in seconds as the decoder sees it (frames / average fps). Raises on unreadable files."""
    import decord

    reader = decord.VideoReader(str(path))
    fps = reader.get_avg_fps()
    if not fps or fps <= 0:
        raise ValueError(f"{path}: decoder reports no frame rate")
    return len(reader) / fps


def fetch_clips(elements: list[dict[str, Any]], image_patch_size: int) -> DecodedClip:
    """Decode several clip elements of one video (time order) into one video: the later clips resized to the first
    clip's frame size, frames concatenated; its ``sample_fps`` is frames per second of the clips' total length and its
    metadata's ``frames_indices`` are the absolute source frames (so timestamps stay true). VideoError as
    :func:`fetch_element`; ValueError without elements."""
    if not elements:
        raise ValueError("no clips to decode")
    import torch

    first = fetch_element(elements[0], image_patch_size=image_patch_size)
    height, width = first.frames.shape[-2:]
    decoded = [first] + [
        fetch_element({**e, "resized_height": height, "resized_width": width}, image_patch_size=image_patch_size)
        for e in elements[1:]
    ]
    frames = torch.cat([d.frames for d in decoded])
    seconds = sum(max(float(e["video_end"]) - float(e["video_start"]), 1e-6) for e in elements)
    metadata = dict(first.metadata)
    metadata["frames_indices"] = [i for d in decoded for i in d.metadata.get("frames_indices", [])]
    metadata["total_num_frames"] = sum(int(d.metadata.get("total_num_frames", 0)) for d in decoded)
    return DecodedClip(
        frames=frames, sample_fps=frames.shape[0] / seconds, metadata=metadata, element=dict(first.element)
    )
