"""zoomzero-plugin: evidence-grounded RL for video LLMs (Zoom-Zero, VideoZoomer) as an EasyR1 plugin.

The core (this package's top-level modules) is host-free: it never imports EasyR1, Ray or vLLM.
Every public name loads its module on first use: importing the package (every process of a CPU venv does, through
the torchvision start-up hook of ``scripts/install-cpu.sh``) costs almost nothing.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "GroundTruth": "ground_truth",
    **dict.fromkeys(("ParsedResponse", "glue_char_ranges", "parse_response"), "gvqa.parsing"),
    **dict.fromkeys(("grounding_prompt", "zoom_prompt"), "gvqa.prompts"),
    **dict.fromkeys(("COMPONENTS", "RewardConfig", "score_parsed", "score_response"), "gvqa.reward"),
    **dict.fromkeys(("Span", "clean_spans", "intersection_length", "iog", "iop", "iou", "merge_spans", "total_length"),
                    "spans"),
    **dict.fromkeys(("Clip", "ZoomBudget", "ZoomPlan", "plan_coarse", "plan_pass", "plan_zoom"), "gvqa.zoom"),
    "group_normalize": "gvqa.advantages",
    "grpo_advantage": "gvqa.advantages",
    "token_adv": "gvqa.advantages",
    "GlueTokenMasker": "gvqa.glue_masks",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "COMPONENTS",
    "Clip",
    "GlueTokenMasker",
    "GroundTruth",
    "ParsedResponse",
    "RewardConfig",
    "Span",
    "ZoomBudget",
    "ZoomPlan",
    "clean_spans",
    "glue_char_ranges",
    "group_normalize",
    "grounding_prompt",
    "grpo_advantage",
    "intersection_length",
    "iog",
    "iop",
    "iou",
    "merge_spans",
    "parse_response",
    "plan_coarse",
    "plan_pass",
    "plan_zoom",
    "score_parsed",
    "score_response",
    "token_adv",
    "total_length",
    "zoom_prompt",
]
