"""A clip shown as one video (``clip_as: video``): which native frames, at what rate, with what metadata.

The environment names a clip's frames (native indices, both segment ends included, :func:`.environment.clip_indices`).
Shown as one video, the clip carries its own timing to the model: Qwen3-VL writes each temporal patch's time into
the prompt from the frames' absolute indices and the file's native rate (the metadata); Qwen2.5-VL spaces its temporal
M-RoPE positions by the clip's own rate (``second_per_grid_t = temporal_patch / sample_fps``). A video is cut into
temporal patches of ``temporal_patch`` frames, so the frames are padded to a whole number of patches by repeating the
last one, as Qwen's processors pad (which also gives a 1-frame clip the 2 frames Qwen3-VL's processor needs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .environment import Frame, VideoInfo


@dataclass(frozen=True)
class ClipVideo:
    """The frames of one clip shown as a video: native indices (padded), the file's native rate and frame count."""

    indices: tuple[int, ...]
    native_fps: float
    total_frames: int
    frames: int  # the clip's own frames, before padding

    @property
    def sample_fps(self) -> float:
        """Frames per second of video between the clip's first and last own frames (the native rate when it has
        one frame, or all its frames are one)."""
        first, last = self.indices[0], self.indices[self.frames - 1]
        if self.frames < 2 or last <= first:
            return self.native_fps
        return (self.frames - 1) * self.native_fps / (last - first)

    @property
    def start(self) -> float:
        return self.indices[0] / self.native_fps

    @property
    def end(self) -> float:
        return self.indices[-1] / self.native_fps

    def metadata(self, height: int, width: int) -> dict[str, Any]:
        """Decoder metadata of the frames (transformers' ``VideoMetadata`` fields): absolute indices, native rate."""
        return {
            "total_num_frames": self.total_frames,
            "fps": self.native_fps,
            "frames_indices": list(self.indices),
            "duration": self.total_frames / self.native_fps,
            "height": int(height),
            "width": int(width),
        }


def clip_video(frames: Sequence[Frame], video: VideoInfo, temporal_patch: int) -> ClipVideo:
    """The clip of ``frames`` (one call's, in order) of ``video`` as one video, padded to whole temporal patches."""
    if not frames:
        raise ValueError("a clip shown as a video needs at least one frame")
    indices = [f.frame for f in frames]
    indices += [indices[-1]] * (-len(indices) % max(1, int(temporal_patch)))
    return ClipVideo(tuple(indices), video.fps, video.frames, len(frames))
