"""Zoom-Zero, host-free: zoom planning (Eq. 3), the response template's parser, the grounding and zoom prompts, the
rewards, TokenAdv (Eq. 4–5) and its glue token masks, and the EasyR1 batch reward file (``gvqa_reward.py``,
``zoomzero:gvqa``). Imports only itself and the shared core; names load their modules on first use."""

from ..lazy import lazy_names

_NAMES = {
    **dict.fromkeys(
        (
            "PAPER_BUDGETS",
            "Clip",
            "ZoomBudget",
            "ZoomPlan",
            "fetch_plan",
            "paper_budget",
            "plan_coarse",
            "plan_pass",
            "plan_zoom",
        ),
        "zoom",
    ),
    **dict.fromkeys(
        ("ParsedResponse", "glue_char_ranges", "glue_spans", "matches_template", "parse_response", "parse_span_list"),
        "parsing",
    ),
    **dict.fromkeys(
        ("DEFAULT_PROMPT_STYLE", "PROMPT_STYLES", "grounding_prompt", "grounding_row", "zoom_prompt"), "prompts"
    ),
    **dict.fromkeys(("COMPONENTS", "RewardConfig", "score_parsed", "score_response"), "reward"),
    **dict.fromkeys(("group_normalize", "grpo_advantage", "token_adv"), "advantages"),
    "GlueTokenMasker": "glue_masks",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = [
    "COMPONENTS",
    "DEFAULT_PROMPT_STYLE",
    "PAPER_BUDGETS",
    "PROMPT_STYLES",
    "Clip",
    "GlueTokenMasker",
    "ParsedResponse",
    "RewardConfig",
    "ZoomBudget",
    "ZoomPlan",
    "fetch_plan",
    "glue_char_ranges",
    "glue_spans",
    "grounding_prompt",
    "grounding_row",
    "group_normalize",
    "grpo_advantage",
    "matches_template",
    "paper_budget",
    "parse_response",
    "parse_span_list",
    "plan_coarse",
    "plan_pass",
    "plan_zoom",
    "score_parsed",
    "score_response",
    "token_adv",
    "zoom_prompt",
]
