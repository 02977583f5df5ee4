"""The model's vision geometry: how pixels become visual tokens, read from the model, never guessed from its name.

A Qwen-VL model cuts every image or frame into square patches of ``patch_size`` pixels, merges ``merge_size`` ×
``merge_size`` neighbouring patches into one token, and folds ``temporal_patch`` consecutive frames of a video into
one temporal patch. So one token covers a ``factor`` × ``factor`` pixel square (``factor = patch_size ·
merge_size``), and a video frame of ``P`` pixels costs ``P / (factor² · temporal_patch)`` context tokens (an image,
``P / factor²``). A model may also write each frame pair's time into the prompt as text (``timestamps``; Qwen3-VL's
``<4.0 seconds>``), where an older one encodes time only in its rotary positions.

:meth:`VisionGeometry.of` reads a loaded processor, :func:`load_geometry` a model folder or hub id; :func:`merged_grid`
is an image's token grid under a processor's own resizing. Every path that
has a model uses the model's own geometry; :data:`DEFAULT_GEOMETRY` serves only what is written before any model is
known (the budgets' defaults, stated per frame in tokens so that they keep their meaning on any model).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .cpu_compat import ensure_torchvision_importable


@dataclass(frozen=True)
class VisionGeometry:
    """Patch size, spatial merge and temporal patch of one model (its processor's numbers), and whether its
    processor writes frame timestamps into the prompt."""

    patch_size: int
    """Pixels per side of one vision-encoder patch."""
    merge_size: int
    """Patches per side merged into one visual token."""
    temporal_patch: int
    """Consecutive video frames folded into one temporal patch."""
    timestamps: bool = False
    """The processor writes each frame pair's time into the prompt as text (Qwen3-VL)."""

    def __post_init__(self) -> None:
        if min(self.patch_size, self.merge_size, self.temporal_patch) < 1:
            raise ValueError(f"a vision geometry needs positive sizes, got {self}")

    @property
    def factor(self) -> int:
        """Pixels per side of one visual token (``patch_size · merge_size``)."""
        return self.patch_size * self.merge_size

    def frame_tokens(self, pixels: float) -> float:
        """Context tokens one video frame of ``pixels`` costs."""
        return pixels / (self.factor**2 * self.temporal_patch)

    def frame_pixels(self, tokens: float) -> int:
        """Pixels of a video frame that costs ``tokens`` context tokens (the inverse of :meth:`frame_tokens`)."""
        return int(round(tokens * self.factor**2 * self.temporal_patch))

    def fetch_patch_size(self) -> int:
        """The ``image_patch_size`` to give qwen-vl-utils so that it sizes frames on this model's token grid
        (qwen-vl-utils multiplies it by its own spatial merge)."""
        return fetch_patch_size(self.factor)

    @classmethod
    def of(cls, processor: Any) -> VisionGeometry:
        """The geometry of a loaded Qwen-VL processor (its video processor's numbers, else its image processor's).
        ValueError when it has neither."""
        vision = getattr(processor, "video_processor", None) or getattr(processor, "image_processor", None)
        if vision is None or getattr(vision, "patch_size", None) is None:
            raise ValueError(f"{type(processor).__name__} is not a vision-language processor: no patch size")
        return cls(
            int(vision.patch_size),
            int(getattr(vision, "merge_size", 1) or 1),
            int(getattr(vision, "temporal_patch_size", 1) or 1),
            hasattr(processor, "_calculate_timestamps"),
        )


def merged_grid(image_processor: Any, width: int, height: int) -> tuple[int, int]:
    """The merged-patch grid ``(h, w)`` a Qwen-VL image processor gives a ``width × height`` image (its own
    ``smart_resize`` and size bounds), computed without processing pixels: the image's ``h · w`` tokens."""
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

    patch, merge = int(image_processor.patch_size), int(image_processor.merge_size)
    size = image_processor.size
    h, w = smart_resize(
        int(height), int(width), factor=patch * merge, min_pixels=size["shortest_edge"], max_pixels=size["longest_edge"]
    )
    return h // (patch * merge), w // (patch * merge)


# Qwen2.5-VL's geometry: the budgets' defaults before a model is known (each path with a model uses the model's).
DEFAULT_GEOMETRY = VisionGeometry(patch_size=14, merge_size=2, temporal_patch=2)


def fetch_patch_size(factor: int) -> int:
    """qwen-vl-utils' ``image_patch_size`` for tokens of ``factor`` pixels a side (it multiplies by its own
    ``SPATIAL_MERGE_SIZE``). ValueError when no patch size gives that factor."""
    from qwen_vl_utils.vision_process import SPATIAL_MERGE_SIZE

    if factor % SPATIAL_MERGE_SIZE:
        raise ValueError(
            f"qwen-vl-utils sizes frames in multiples of {SPATIAL_MERGE_SIZE} patches; a {factor}-px "
            "token cannot be expressed"
        )
    return factor // SPATIAL_MERGE_SIZE


def qwen_vl_utils_factor() -> int:
    """The pixels per token side qwen-vl-utils uses when a caller passes no ``image_patch_size`` (as EasyR1's
    ``process_video`` does): its default patch size times its spatial merge."""
    import inspect

    from qwen_vl_utils import vision_process

    default = inspect.signature(vision_process.fetch_video).parameters["image_patch_size"].default
    return int(default) * int(vision_process.SPATIAL_MERGE_SIZE)


def visual_token_ratio(geometry: VisionGeometry) -> float:
    """How many of qwen-vl-utils' default-sized tokens one of the model's tokens covers: ``(factor / q)²``."""
    return (geometry.factor / qwen_vl_utils_factor()) ** 2


@lru_cache(maxsize=16)
def load_geometry(model: str, trust_remote_code: bool = False) -> VisionGeometry:
    """The geometry of a model folder or hub id, from its processor files (downloaded if need be, as any loader
    would). ValueError naming the model when they cannot be read."""
    ensure_torchvision_importable()
    from transformers import AutoProcessor

    try:
        processor = AutoProcessor.from_pretrained(model, trust_remote_code=trust_remote_code, use_fast=True)
    except Exception as e:  # noqa: BLE001 - any loader failure means the same to the caller
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        raise ValueError(f"cannot read the vision geometry of {model} from its processor files ({first})") from None
    return VisionGeometry.of(processor)
