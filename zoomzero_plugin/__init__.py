"""zoomzero-plugin: evidence-grounded RL for video LLMs (Zoom-Zero, VideoZoomer) as an EasyR1 plugin.

The core (this package's top-level modules) is host-free: it never imports EasyR1, Ray or vLLM.
"""

from .advantages import group_normalize, grpo_advantage, token_adv
from .ground_truth import GroundTruth
from .parsing import ParsedResponse, glue_char_ranges, parse_response
from .prompts import grounding_prompt, zoom_prompt
from .rewards import COMPONENTS, RewardConfig, score_parsed, score_response
from .spans import Span, clean_spans, intersection_length, iog, iop, iou, merge_spans, total_length
from .token_masks import GlueTokenMasker
from .zoom import Clip, ZoomBudget, ZoomPlan, plan_coarse, plan_pass, plan_zoom

__version__ = "0.1.0"

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
