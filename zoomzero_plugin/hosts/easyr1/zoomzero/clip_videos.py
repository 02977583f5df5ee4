"""The VideoZoomer rollout's clips as videos (``agent.clip_as: video``): each call's frames one video reference with
the layout the engine gives it, so the assembled batch holds the clip's tokens and positions as vLLM sampled them.

The frames are the environment's (native indices, both segment ends), padded to whole temporal patches
(:func:`~zoomzero_plugin.agent.clips.clip_video`), read at the agent's frame size (the overview's: every frame of a
video has one size); the reference (:mod:`..video_refs`) carries the file's native rate and the clip's own rate, and
the layout (:mod:`..video_layouts`) the tokens vLLM expands its placeholder to: Qwen3-VL's timestamp text per temporal
patch, or Qwen2.5-VL's pads at time-aligned M-RoPE positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zoomzero_plugin.agent import Frame, VideoInfo
from zoomzero_plugin.agent.clips import clip_video

from ..conversation import VideoLayout
from ..video_layouts import VideoLayouts, tokens_per_second
from ..video_refs import video_ref


class ClipVideos:
    """Video references and layouts of one model's clips (its processor; its config for the M-RoPE time scale)."""

    def __init__(self, processor: Any, max_pixels: int, min_pixels: int):
        layouts = VideoLayouts(processor, 1.0)
        if not layouts.geometry.timestamps:  # time in M-RoPE: the model's own scale, from its config
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(processor.tokenizer.name_or_path)
            layouts = VideoLayouts(processor, tokens_per_second(config))
        self.layouts, self.max_pixels, self.min_pixels = layouts, int(max_pixels), int(min_pixels)

    def clip(
        self, video: VideoInfo, frames: Sequence[Frame], size: tuple[int, int]
    ) -> tuple[dict[str, Any], VideoLayout]:
        """The reference and layout of a call's ``frames`` of ``video``, each frame ``size`` = (width, height)."""
        timing = clip_video(frames, video, self.layouts.geometry.temporal_patch)
        ref = video_ref(
            video.path, timing.indices, video.fps, timing.sample_fps, video.frames, self.max_pixels, self.min_pixels
        )
        width, height = size
        return ref, self.layouts.layout(timing.indices, video.fps, timing.sample_fps, height, width)
