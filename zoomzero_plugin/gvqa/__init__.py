"""Zoom-Zero, host-free: :mod:`.zoom` (zoom planning, Eq. 3), :mod:`.parsing` (the response template's total parser),
:mod:`.prompts` (grounding and zoom prompts), :mod:`.reward` (the reward components), :mod:`.advantages` (TokenAdv,
Eq. 4–5, and GRPO) and :mod:`.glue_masks` (its glue token masks), and the EasyR1 batch reward file
:mod:`.gvqa_reward` (``zoomzero:gvqa``). Imports only itself and the shared core; names load their modules on first
use.
"""

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

__all__ = sorted(_NAMES)
