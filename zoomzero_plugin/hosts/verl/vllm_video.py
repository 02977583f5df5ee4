"""vLLM's Qwen2/2.5-VL video input with its timing: the wrappers of two ``vllm:`` seams (:mod:`.seams`).

verl's agent loops (and this package's) hand vLLM each video as ``(frames, metadata)``: the frames already sampled,
the metadata saying at which rate (``fps``, ``frames_indices``, ``total_num_frames``). vLLM 0.28 keeps that metadata
only for the models that declare they need it (Qwen3-VL among them); for Qwen2-VL and Qwen2.5-VL its data parser
keeps the bare frames and its processor calls transformers' without ``video_metadata``. transformers 5 computes a
Qwen2.5-VL video's ``second_per_grid_ts`` from the metadata's sampled rate and, without metadata, takes 24 fps: a clip
sampled at 1 fps gets a temporal patch of 2/24 s instead of 2 s, so vLLM samples its tokens at temporal positions
up to 24 times too close together, while the trainer (whose processor got the metadata) places them at the clip's
own rate. Every token after a video then sits at other positions in vLLM than in training: log-prob gaps of several
nats on a trained model. (vLLM fixed it after 0.28: vllm-project/vllm#47736.)

- :func:`wrap_get_data_parser`: the parser of a Qwen2.5-VL model keeps ``(frames, metadata)`` pairs when every video
  of a request carries metadata, as vLLM's parser keeps them for models that need metadata; the pairs also hash with
  their metadata, so vLLM's processor cache cannot give one timing's result to the same frames at another rate.
  Videos without metadata (vLLM's own profiling inputs) parse as before; other models that share the parser class
  are left as they are (their processors may not take pairs).
- :func:`wrap_call_hf_processor`: Qwen2.5-VL's processor hands such pairs to transformers' as ``videos`` and
  ``video_metadata``. Frames are not sampled again (the processor's ``do_sample_frames`` default, False, or the
  caller's setting).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any


def keep_pairs(parse: Callable) -> Callable:
    """A parser's ``_parse_video_data`` that keeps ``(frames, metadata)`` items when every video has metadata."""

    def _parse_video_data(data: Any) -> Any:
        items = parse(data)
        metadata = getattr(items, "metadata", None)
        if not isinstance(metadata, list) or not metadata or any(m is None for m in metadata):
            return items
        if any(isinstance(video, tuple) for video in items.data):  # kept already (a vLLM that keeps them)
            return items
        return type(items)([(video, meta) for video, meta in zip(items.data, metadata)], metadata=metadata)

    return _parse_video_data


def wrap_get_data_parser(original: Callable) -> Callable:
    def get_data_parser(self) -> Any:
        parser = original(self)
        from vllm.model_executor.models.qwen2_5_vl import Qwen2_5_VLProcessingInfo

        if type(self) is Qwen2_5_VLProcessingInfo:  # its processor is the one wrap_call_hf_processor unpacks
            parser._parse_video_data = keep_pairs(parser._parse_video_data)
        return parser

    return get_data_parser


def video_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of a video's metadata that transformers' ``VideoMetadata`` takes (a loader may add others)."""
    from transformers.video_utils import VideoMetadata

    known = {f.name for f in fields(VideoMetadata)}
    return {k: v for k, v in dict(metadata).items() if k in known}


def wrap_call_hf_processor(original: Callable) -> Callable:
    def _call_hf_processor(self, prompt: Any, mm_data: Mapping[str, object], mm_kwargs: Any, tok_kwargs: Any) -> Any:
        videos = mm_data.get("videos")
        if not videos or "video_metadata" in mm_data or not all(isinstance(v, tuple) for v in videos):
            return original(self, prompt, mm_data, mm_kwargs, tok_kwargs)
        data = dict(mm_data)
        data["videos"] = [frames for frames, _ in videos]
        data["video_metadata"] = [video_metadata(meta) for _, meta in videos]
        return original(self, prompt, data, mm_kwargs, tok_kwargs)

    return _call_hf_processor
