"""Per-response reward components, each in [0, 1], and their weighted overall.

- format:   the whole response has the template's shape and its glue list parses (≥1 span, none invalid).
- iou:      IoU of the merged predicted glue spans with the merged ground-truth spans; 0 without glue.
- accuracy: the ``<answer>`` letter equals the ground-truth letter (coarse pass).
- zoom:     the fine pass, shown only the predicted spans, answered correctly (``zoom_answer``).

(VideoZoomer's trajectory reward, with its tool term, is :mod:`zoomzero_plugin.agent.reward`.)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..ground_truth import GroundTruth
from ..spans import iou
from .parsing import ParsedResponse, parse_response

COMPONENTS = ("format", "iou", "accuracy", "zoom")


@dataclass(frozen=True)
class RewardConfig:
    """Which components are computed and how ``overall`` weighs them.

    ``overall = Σ w_k r_k`` over the enabled components, divided by ``Σ w_k`` when ``normalize``
    (so it stays in [0, 1]). Missing weights default to 1.
    """

    components: tuple[str, ...] = ("format", "iou", "accuracy")
    weights: Mapping[str, float] = field(default_factory=dict)
    normalize: bool = True

    def __post_init__(self) -> None:
        unknown = set(self.components) - set(COMPONENTS) | set(self.weights) - set(COMPONENTS)
        if unknown:
            raise ValueError(f"unknown reward components {sorted(unknown)}; known: {list(COMPONENTS)}")
        if not self.components:
            raise ValueError("at least one reward component must be enabled")
        for k, w in self.weights.items():
            if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (math.isfinite(w) and w >= 0):
                raise ValueError(f"reward weight {k}={w!r} must be a finite number >= 0")
        if sum(self.weight(k) for k in self.components) <= 0:
            raise ValueError(f"the weights of the enabled components {self.components} sum to 0")

    def weight(self, name: str) -> float:
        return float(self.weights.get(name, 1.0))

    @classmethod
    def from_kwargs(cls, components: Sequence[str] | str | None = None, weights=None, normalize=True) -> RewardConfig:
        """Build from EasyR1-style kwargs (``components`` may be ``"format,iou,accuracy"``)."""
        if isinstance(components, str):
            components = [c.strip() for c in components.split(",") if c.strip()]
        return cls(tuple(components or cls.components), dict(weights or {}), bool(normalize))


def score_parsed(
    parsed: ParsedResponse,
    truth: GroundTruth,
    config: RewardConfig = RewardConfig(),
    zoom_answer: str | None = None,
) -> dict[str, float]:
    """Components named in ``config`` plus ``overall``, for an already parsed response."""
    accuracy = float(parsed.answer is not None and parsed.answer == truth.answer)
    values = {
        "format": float(parsed.format_ok),
        "iou": iou(parsed.spans, truth.spans),
        "accuracy": accuracy,
        "zoom": float(zoom_answer is not None and zoom_answer == truth.answer),
    }
    out = {k: values[k] for k in config.components}
    total = sum(config.weight(k) * out[k] for k in config.components)
    if config.normalize:
        total /= sum(config.weight(k) for k in config.components)
    out["overall"] = total
    return out


def score_response(
    response: object,
    truth: GroundTruth,
    config: RewardConfig = RewardConfig(),
    zoom_answer: str | None = None,
) -> dict[str, float]:
    """Parse ``response`` against ``truth.duration`` and score it."""
    return score_parsed(parse_response(response, truth.duration), truth, config, zoom_answer)
