"""The wrappers of the seams that work around verl bugs (the table, with the upstream report lines, is :mod:`.seams`).

- ``maybe_fix_3d_position_ids``: verl marks every nested 3-D (or 4-D) position-id tensor ragged along dim 2, to undo
  a tensordict pickling quirk of padding-free batches; a padded batch's position ids are not ragged there, and the
  mark breaks ``update_actor``. The fix runs only where it applies: ragged position ids.
- ``_get_input_embeds`` on a Qwen-VL batch without images or videos runs the vision tower on dummy pixels (so every
  rank touches its parameters) and calls ``.mean()`` on the result, which transformers 5.9 returns as a
  ``BaseModelOutputWithPooling``: for that call the tower's output is its pooled tensor, as verl reads it elsewhere
  (``unpack_visual_output``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import torch


def wrap_fix_3d_position_ids(original: Callable) -> Callable:
    def maybe_fix_3d_position_ids(data: Any) -> Any:
        if "position_ids" not in data.keys():
            return original(data)
        positions = data["position_ids"]
        if not getattr(positions, "is_nested", False) or _is_padded(positions):
            return None
        return original(data)

    return maybe_fix_3d_position_ids


def _is_padded(positions: Any) -> bool:
    """Whether a nested tensor holds equal-length rows of a padded batch (ragged along no dimension)."""
    try:
        lengths = positions.offsets().diff()
    except (AttributeError, RuntimeError):
        return False
    return bool(lengths.numel()) and bool((lengths == lengths[0]).all()) and positions.dim() >= 3


class _Pooled(torch.nn.Module):
    """A vision tower whose output is its pooled tensor (what verl's text-only branch averages)."""

    def __init__(self, visual: torch.nn.Module):
        super().__init__()
        self.inner = visual

    def forward(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        from verl.utils.transformers_compat import unpack_visual_output

        return unpack_visual_output(self.inner(*args, **kwargs))[0]


@contextmanager
def _pooled_visual(model: torch.nn.Module):
    modules = model._modules
    visual = modules["visual"]
    modules["visual"] = _Pooled(visual)
    try:
        yield
    finally:
        modules["visual"] = visual


def wrap_get_input_embeds(original: Callable) -> Callable:
    def _get_input_embeds(model, input_ids, attention_mask=None, pixel_values=None, pixel_values_videos=None, *a, **kw):
        if pixel_values is not None or pixel_values_videos is not None or "visual" not in model._modules:
            return original(model, input_ids, attention_mask, pixel_values, pixel_values_videos, *a, **kw)
        with _pooled_visual(model):
            return original(model, input_ids, attention_mask, pixel_values, pixel_values_videos, *a, **kw)

    return _get_input_embeds
