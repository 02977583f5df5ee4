"""How a Qwen-VL engine expands one video placeholder, computed from the model's processor without its pixels.

A multi-turn rollout that shows a clip as one video must lay the clip's tokens out as vLLM did while sampling
(:class:`~.conversation.VideoLayout`), so that the actor's positions and log-probs equal the sampler's:

- a model whose processor writes frame timestamps (Qwen3-VL; ``VisionGeometry.timestamps``): the placeholder
  ``<|vision_start|><|video_pad|><|vision_end|>`` becomes, per temporal patch, its time as text
  (``<4.0 seconds>``, the processor's own ``_calculate_timestamps`` over the clip's absolute frame indices and the
  file's native rate, each encoded on its own as vLLM encodes it), then ``<|vision_start|>``, its ``h · w`` pads and
  ``<|vision_end|>``: one vision block of one temporal patch per frame pair;
- otherwise (Qwen2/2.5-VL): the ``<|video_pad|>`` token becomes ``t · h · w`` pads, one vision block whose temporal
  positions are ``⌊k · second_per_grid_t · tokens_per_second⌋`` (float32, as vLLM and transformers compute them),
  ``second_per_grid_t = temporal_patch / sample_fps``: time-aligned M-RoPE at the clip's own rate.

The grid ``(t, h, w)`` is what the model's video processor gives frames of that count and size (it is asked once per
distinct shape, on blank frames, so every family's own resize rule applies).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import torch

from zoomzero_plugin.vision import VisionGeometry

from .conversation import VideoLayout

VISION_START, VIDEO_PAD, VISION_END = "<|vision_start|>", "<|video_pad|>", "<|vision_end|>"


def tokens_per_second(model_config: Any) -> float:
    """The model's M-RoPE time scale (``vision_config.tokens_per_second``; vLLM's default, 1, when it has none)."""
    return float(getattr(getattr(model_config, "vision_config", None), "tokens_per_second", None) or 1.0)


class VideoLayouts:
    """Video layouts of one model: its processor (tokenizer, video processor, geometry) and M-RoPE time scale."""

    def __init__(self, processor: Any, time_scale: float):
        self.processor, self.tokenizer = processor, processor.tokenizer
        self.geometry = VisionGeometry.of(processor)
        self.time_scale = float(time_scale)
        ids = self.tokenizer.convert_tokens_to_ids
        self.start, self.pad, self.end = (
            ids(VISION_START),
            ids(getattr(processor, "video_token", VIDEO_PAD)),
            ids(VISION_END),
        )
        self._grid = lru_cache(maxsize=256)(self._processed_grid)

    def _processed_grid(self, frames: int, height: int, width: int) -> tuple[int, int, int]:
        blank = torch.zeros((frames, 3, height, width), dtype=torch.uint8)
        out = self.processor.video_processor(videos=[blank], do_sample_frames=False, return_tensors="pt")
        t, h, w = (int(x) for x in out["video_grid_thw"][0].tolist())
        merge = self.geometry.merge_size
        return t, h // merge, w // merge

    def grid(self, frames: int, height: int, width: int) -> tuple[int, int, int]:
        """Merged grid ``(t, h, w)`` of a video of ``frames`` frames of ``height × width`` pixels."""
        return self._grid(int(frames), int(height), int(width))

    def layout(
        self, indices: Sequence[int], native_fps: float, sample_fps: float, height: int, width: int
    ) -> VideoLayout:
        """The layout of a clip of native frames ``indices`` (padded to whole temporal patches) of ``height ×
        width`` pixels, from a file at ``native_fps``, sampled at ``sample_fps``."""
        t, h, w = self.grid(len(indices), height, width)
        if self.geometry.timestamps:
            return self._timestamped(indices, native_fps, t, h, w)
        step = torch.arange(t) * (self.geometry.temporal_patch / float(sample_fps)) * self.time_scale
        return VideoLayout(
            placeholder=(self.pad,),
            ids=(self.pad,) * (t * h * w),
            blocks=((0, t, h, w),),
            times=(tuple(step.long().tolist()),),
        )

    def _timestamped(self, indices: Sequence[int], native_fps: float, t: int, h: int, w: int) -> VideoLayout:
        times = self.processor._calculate_timestamps(list(indices), float(native_fps), self.geometry.temporal_patch)
        if len(times) != t:
            raise ValueError(f"{len(times)} timestamps for {t} temporal patches (frames {list(indices)[:4]}…)")
        ids: list[int] = []
        blocks = []
        for seconds in times:
            ids += self.tokenizer.encode(f"<{seconds:.1f} seconds>", add_special_tokens=False)
            ids.append(self.start)
            blocks.append((len(ids), 1, h, w))
            ids += [self.pad] * (h * w) + [self.end]
        return VideoLayout(
            placeholder=(self.start, self.pad, self.end),
            ids=tuple(ids),
            blocks=tuple(blocks),
            times=((0,),) * len(blocks),
        )
