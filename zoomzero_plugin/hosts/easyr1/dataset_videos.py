"""Qwen3-VL video rows in EasyR1's dataset: the prompt's frame timestamps and frame count as the rollout engine's.

Qwen3-VL writes a timestamp before every temporal patch of a video (``<3.0 seconds>``), computed by its processor from
the decoder's metadata (native frame indices and rate); without metadata the processor assumes 24 fps and samples the
frames again at 2 fps. EasyR1 main asks ``process_video`` for the metadata in its vLLM rollout (its fix for Qwen3-VL
videos) but not in ``RLHFDataset.__getitem__``, which hands the processor bare frames: the prompt the actor trains on
then holds other timestamps and fewer temporal patches than the frames the actor's forward receives and the prompt
vLLM generated from (measured: a 12-frame video at 1 fps became 2 temporal patches at ``<0.1 seconds>``,
``<0.4 seconds>``).

The ``RLHFDataset.__init__`` seam gives a dataset whose processor is Qwen3-VL's one that passes each video's
recorded metadata (the ``process_video`` seam records it: :func:`~.vllm_engine.record_sample_fps`) and
``do_sample_frames=False``, as vLLM's processor gets them. Other processors, and a call that brings its own metadata,
are left as they are.

The actor, too: EasyR1's ``FSDPWorker._process_multi_modal_inputs`` processes a row's video frames with the *image*
processor, whose normalisation and pixel bounds are the image's (a released Qwen3-VL's image processor takes frames of
at least 65,536 pixels, its video processor whole clips of at least 4,096: a small frame is upscaled for the actor
alone, and its tokens no longer match the prompt's). For a Qwen3-VL processor (:func:`timed_videos`) the seam of that
method (:func:`~.multiturn.wrap_process_multi_modal_inputs`) processes videos with the video processor, with their
metadata, as vLLM and the dataset do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zoomzero_plugin.vision import VisionGeometry

from .vllm_engine import recorded_metadata

QWEN3_VL_PROCESSOR = "Qwen3VLProcessor"  # the processor class name EasyR1 main tests for Qwen3-VL (and MoE)


class Qwen3VLProcessorWithVideoMetadata:
    """A Qwen3-VL processor whose calls with ``videos`` add the frames' recorded metadata; everything else is the
    processor's own. Its class name contains the processor's, so EasyR1's name checks still find Qwen3-VL."""

    def __init__(self, processor: Any):
        self.processor = processor

    def __getattr__(self, name: str) -> Any:
        if name == "processor" or name.startswith("__"):  # unpickling (not set yet); copy's and pickle's protocols
            raise AttributeError(name)
        return getattr(self.processor, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.processor(*args, **with_video_metadata(kwargs))


def with_video_metadata(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Processor keyword arguments with ``video_metadata`` (and ``do_sample_frames=False``) for ``videos`` whose
    frames all have recorded metadata; unchanged otherwise."""
    videos = kwargs.get("videos")
    if not videos or kwargs.get("video_metadata") is not None or not isinstance(videos, Sequence):
        return kwargs
    metadata = [recorded_metadata(v) for v in videos]
    if any(m is None for m in metadata):
        return kwargs
    return {**kwargs, "video_metadata": metadata, "do_sample_frames": False}


def timed_processor(processor: Any) -> Any:
    """``processor``, wrapped when it is Qwen3-VL's (:class:`Qwen3VLProcessorWithVideoMetadata`)."""
    if processor is None or isinstance(processor, Qwen3VLProcessorWithVideoMetadata):
        return processor
    if QWEN3_VL_PROCESSOR not in type(processor).__name__:
        return processor
    return Qwen3VLProcessorWithVideoMetadata(processor)


def wrap_dataset_init(original: Callable) -> Callable:
    """EasyR1's ``RLHFDataset.__init__`` given a processor that passes its videos' metadata when it is Qwen3-VL's (its
    filter of overlong prompts measures them with it too)."""

    def __init__(self, data_path: Any, tokenizer: Any, processor: Any, *args: Any, **kwargs: Any) -> None:
        original(self, data_path, tokenizer, timed_processor(processor), *args, **kwargs)

    return __init__


def timed_videos(processor: Any, data: Any) -> bool:
    """Whether an EasyR1 batch holds videos and ``processor`` writes their timestamps into the prompt (Qwen3-VL): the
    actor must then process them with the video processor, as the engine does."""
    if processor is None or getattr(processor, "video_processor", None) is None:
        return False
    media = data.non_tensor_batch.get("multi_modal_data")
    if media is None or not any((m or {}).get("videos") for m in media):
        return False
    return VisionGeometry.of(processor).timestamps
