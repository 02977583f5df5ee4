"""zoomzero-plugin: evidence-grounded RL for video LLMs (Zoom-Zero, VideoZoomer) as an EasyR1 plugin.

Two methods over one shared core: the core (this package's top-level modules: spans, tags, answers, question,
ground truth, rows, video, files, readers, errors, journal, sections, M-RoPE, token masks) is host-free
and never imports EasyR1, Ray or vLLM; Zoom-Zero lives in :mod:`.gvqa`, VideoZoomer in :mod:`.agent`; ``inference``,
``eval``, ``data`` and ``synthetic`` are tools over both; ``hosts/easyr1`` is the only code that knows EasyR1.
Every public name loads its module on first use: importing the package (every process of a CPU venv does, through
the torchvision start-up hook of ``scripts/install-cpu.sh``) costs almost nothing.
"""

from .lazy import lazy_names

__version__ = "0.1.0"

_NAMES = {
    "GroundTruth": "ground_truth",
    **dict.fromkeys(
        ("Span", "clean_spans", "intersection_length", "iog", "iop", "iou", "merge_spans", "total_length"), "spans"
    ),
    **dict.fromkeys(("LetterRule", "answer_letter", "extract_letter", "read_letter"), "answers"),
    # Zoom-Zero
    **dict.fromkeys(("ParsedResponse", "glue_char_ranges", "parse_response"), "gvqa.parsing"),
    **dict.fromkeys(("grounding_prompt", "zoom_prompt"), "gvqa.prompts"),
    **dict.fromkeys(("COMPONENTS", "RewardConfig", "score_parsed", "score_response"), "gvqa.reward"),
    **dict.fromkeys(("Clip", "ZoomBudget", "ZoomPlan", "plan_coarse", "plan_pass", "plan_zoom"), "gvqa.zoom"),
    **dict.fromkeys(("group_normalize", "grpo_advantage", "token_adv"), "gvqa.advantages"),
    "GlueTokenMasker": "gvqa.glue_masks",
    # VideoZoomer
    "AgentBudget": "agent.budget",
    "Trajectory": "agent.environment",
    "parse_turn": "agent.protocol",
    "score_turns": "agent.reward",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = [
    "COMPONENTS",
    "AgentBudget",
    "Clip",
    "GlueTokenMasker",
    "GroundTruth",
    "LetterRule",
    "ParsedResponse",
    "RewardConfig",
    "Span",
    "Trajectory",
    "ZoomBudget",
    "ZoomPlan",
    "answer_letter",
    "clean_spans",
    "extract_letter",
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
    "parse_turn",
    "plan_coarse",
    "plan_pass",
    "plan_zoom",
    "read_letter",
    "score_parsed",
    "score_response",
    "score_turns",
    "token_adv",
    "total_length",
    "zoom_prompt",
]
