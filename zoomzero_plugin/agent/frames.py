"""Decoding the frames a trajectory names: one batched read per clip, resized as the authors do.

The environment fixes *which* native frames the model sees (:mod:`.environment`); this module reads them, through
the process's :class:`~zoomzero_plugin.video_store.VideoStore`: each video is opened once, the overview and every
clip cost one batched decord read of the frames not already in memory (seek to the nearest key frame, decode
forward), and clips of one video read from several threads decode in parallel. The cost of a clip grows with its
frames (and the key-frame spacing), not with the video's length.

Resizing follows the authors' extractor: a frame larger than ``max_frame_pixels`` is scaled by
``sqrt(max / pixels)`` (sides truncated to integers, Lanczos); if that falls under ``min_frame_pixels`` it is
scaled back up to it; a smaller frame is never enlarged. The model's processor then rounds each side to its
patch grid, as the authors' processor did. (qwen-vl-utils' ``fetch_video`` is not used here: it rounds frame
counts to even numbers and spaces frames by its own rule, which would change the times the checkpoint reads.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import VideoError
from ..video import check_video_file
from ..video_store import VideoStore, shared
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

    Cheap to make: the video is opened once per process (``store``, default :func:`~zoomzero_plugin.video_store.shared`)
    and every reader of it shares the decoded frames. Safe to share between threads (the store gives each thread
    its own decord reader).
    """

    def __init__(self, path: str, store: VideoStore | None = None):
        check_video_file(str(path))  # missing, a folder or empty: said plainly, before decord's own wording
        self.store = store if store is not None else shared()
        frames, fps = self.store.info(str(path))
        try:
            self.info = VideoInfo(str(path), frames, fps)
        except ValueError as e:
            raise VideoError(f"{path}: cannot read the video ({e})") from None

    def read(
        self,
        indices: Sequence[int],
        max_pixels: int = AgentBudget.max_frame_pixels,
        min_pixels: int = AgentBudget.min_frame_pixels,
    ) -> list[Any]:
        """The frames at ``indices`` (one batched decode of those not in memory), resized by :func:`fit_size` within
        the pixel limits; returns PIL RGB images."""
        from PIL import Image

        if not indices:
            return []
        bad = [i for i in indices if not 0 <= i < self.info.frames]
        if bad:
            raise ValueError(f"{self.info.path}: frame indices {bad[:3]} are outside 0..{self.info.frames - 1}")
        images = []
        for array in self.store.frames(self.info.path, list(indices)):
            image = Image.fromarray(array)
            size = fit_size(image.width, image.height, max_pixels, min_pixels)
            images.append(image if size == image.size else image.resize(size, Image.LANCZOS))
        return images


def probe(path: str) -> VideoInfo:
    """Frame count and native fps of ``path``; VideoError when it cannot be read."""
    return FrameReader(path).info
