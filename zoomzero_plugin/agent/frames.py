"""Decoding the frames a trajectory names: decord, one batched read per clip, resized as the authors do.

The environment fixes *which* native frames the model sees (:mod:`.environment`); this module reads them.
A :class:`FrameReader` keeps one open decord reader per video, so the overview and every clip cost one
``get_batch`` each: seek to the nearest key frame, decode forward to the frames asked for. The cost of a clip
grows with its frames (and the key-frame spacing), not with the video's length.

Resizing follows the authors' extractor: a frame larger than ``max_frame_pixels`` is scaled by
``sqrt(max / pixels)`` (sides truncated to integers, Lanczos); if that falls under ``min_frame_pixels`` it is
scaled back up to it; a smaller frame is never enlarged. The model's processor then rounds each side to its
patch grid, as the authors' processor did. (qwen-vl-utils' ``fetch_video`` is not used here: it rounds frame
counts to even numbers and spaces frames by its own rule, which would change the times the checkpoint reads.)
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import VideoError
from ..video import check_video_file
from .budget import AgentBudget
from .environment import VideoInfo


def fit_size(width: int, height: int, max_pixels: int, min_pixels: int) -> tuple[int, int]:
    """(width, height) after the authors' rule (see the module docstring)."""
    pixels = width * height
    if pixels <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / pixels)
    new_w, new_h = int(width * scale), int(height * scale)
    if new_w * new_h < min_pixels:
        up = math.sqrt(min_pixels / max(new_w * new_h, 1))
        new_w, new_h = int(new_w * up), int(new_h * up)
    return max(new_w, 1), max(new_h, 1)


class FrameReader:
    """An open video: ``info`` (frames, native fps) and :meth:`read` of native frame indices as PIL images.

    One reader may be shared by several threads: decord's ``VideoReader`` is not safe for two threads at once
    (its threaded decoder aborts, ``threaded_decoder.cc: Check failed: run_.load()``), so :meth:`read` decodes
    under the reader's own lock. Threads reading different videos still decode in parallel (decord releases
    the GIL); for parallel reads of one video, open a reader per thread.
    """

    def __init__(self, path: str, num_threads: int = 0):
        check_video_file(str(path))  # missing, a folder or empty: said plainly, before decord's own wording
        try:
            import decord
        except ImportError as e:  # decord is a dependency; a broken install is the user's to fix
            raise VideoError(f"{path}: decord is needed to read frames ({e}); pip install decord") from None
        try:
            self._reader = decord.VideoReader(str(path), num_threads=num_threads)
            self._lock = threading.Lock()
            fps = float(self._reader.get_avg_fps())
            self.info = VideoInfo(str(path), len(self._reader), fps)
        except (decord.DECORDError, RuntimeError, ValueError) as e:
            raise VideoError(
                f"{path}: cannot read the video ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
            ) from None

    def read(self, indices: Sequence[int], max_pixels: int = AgentBudget.max_frame_pixels,
             min_pixels: int = AgentBudget.min_frame_pixels) -> list[Any]:
        """The frames at ``indices`` (one batched decode), resized by :func:`fit_size` within the pixel limits;
        returns PIL RGB images."""
        from PIL import Image

        if not indices:
            return []
        bad = [i for i in indices if not 0 <= i < self.info.frames]
        if bad:
            raise ValueError(f"{self.info.path}: frame indices {bad[:3]} are outside 0..{self.info.frames - 1}")
        with self._lock:
            batch = self._reader.get_batch(list(indices)).asnumpy()
        images = []
        for array in batch:
            image = Image.fromarray(array)
            size = fit_size(image.width, image.height, max_pixels, min_pixels)
            images.append(image if size == image.size else image.resize(size, Image.LANCZOS))
        return images


def probe(path: str) -> VideoInfo:
    """Frame count and native fps of ``path``; VideoError when it cannot be read."""
    return FrameReader(path).info
