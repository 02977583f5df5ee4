"""Video timing in verl's position ids: a Qwen2/2.5-VL processor whose ``get_rope_index`` counts each clip's own rate.

verl binds the model's ``get_rope_index`` to the processor (``verl.utils.tokenizer.hf_processor``) and its agent loops
call it once a trajectory ends (``AgentLoopWorker._compute_position_ids``) with the image and video grids only. Two
things then differ from what vLLM computed while sampling the same tokens:

- no ``second_per_grid_ts`` reaches it, so every video counts as 2 fps: a clip sampled at 8 fps gets temporal
  positions 4 times too far apart;
- transformers 5.9's Qwen2.5-VL ``get_rope_index`` truncates each video's seconds per grid to an integer
  (``int(0.25) == 0``: every frame of an 8 fps clip at one time) and starts the text after a video at ``max(h, w)``
  past it, where vLLM starts one past the block's largest position (its temporal ones included).

:func:`timed_processor` gives the processor verl's own extension hook, ``get_rope_index_kwargs`` (each video's
``second_per_grid_ts`` from the processor's output), and a ``get_rope_index`` that computes vLLM's positions
(:func:`zoomzero_plugin.mrope.qwen2_positions`). Other model families are left as verl made them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from zoomzero_plugin.mrope import qwen2_positions

QWEN2_PROCESSORS = ("Qwen2VLProcessor", "Qwen2_5_VLProcessor")


def rope_index_kwargs(multi_modal_inputs: Mapping[str, Any]) -> dict[str, Any]:
    """verl's ``get_rope_index_kwargs`` hook: the videos' seconds per temporal patch, as the processor gave them."""
    seconds = multi_modal_inputs.get("second_per_grid_ts")
    return {} if seconds is None else {"second_per_grid_ts": seconds}


def _numpy(x: Any) -> np.ndarray | None:
    if x is None:
        return None
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def make_rope_index(processor: Any) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """A ``get_rope_index(input_ids, attention_mask, image_grid_thw, video_grid_thw, second_per_grid_ts, …)`` with
    transformers' return shape: positions (3, B, L) and each row's ``max + 1 - L`` (B, 1)."""
    tokenizer = processor.tokenizer
    image = tokenizer.convert_tokens_to_ids(getattr(processor, "image_token", "<|image_pad|>"))
    video = tokenizer.convert_tokens_to_ids(getattr(processor, "video_token", "<|video_pad|>"))
    config = getattr(processor, "config", None)
    vision = getattr(config, "vision_config", None)
    per_second = float(getattr(vision, "tokens_per_second", None) or 1.0)
    merge = int(getattr(vision, "spatial_merge_size", None) or processor.image_processor.merge_size)

    def get_rope_index(
        input_ids: torch.Tensor,
        mm_token_type_ids: Any = None,
        image_grid_thw: Any = None,
        video_grid_thw: Any = None,
        second_per_grid_ts: Any = None,
        attention_mask: Any = None,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        ids = _numpy(input_ids)
        mask = np.ones_like(ids) if attention_mask is None else _numpy(attention_mask)
        positions = qwen2_positions(
            ids,
            mask,
            image,
            video,
            _numpy(image_grid_thw),
            _numpy(video_grid_thw),
            _numpy(second_per_grid_ts),
            per_second,
            merge,
        )
        out = torch.from_numpy(positions).to(input_ids.device)
        deltas = torch.from_numpy(positions.max(axis=(0, 2)) + 1 - ids.shape[1]).reshape(-1, 1)
        return out, deltas

    return get_rope_index


def timed_processor(processor: Any) -> Any:
    """``processor`` (verl's, with the model's ``get_rope_index`` bound) given vLLM's video timing when it is a
    Qwen2/2.5-VL processor; any other processor (or None) unchanged."""
    if processor is None or type(processor).__name__ not in QWEN2_PROCESSORS:
        return processor
    processor.get_rope_index = make_rope_index(processor)
    processor.get_rope_index_kwargs = rope_index_kwargs
    return processor


def wrap_hf_processor(original: Callable) -> Callable:
    def hf_processor(name_or_path: Any, **kwargs: Any) -> Any:
        return timed_processor(original(name_or_path, **kwargs))

    return hf_processor
