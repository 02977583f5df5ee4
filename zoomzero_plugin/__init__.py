"""zoomzero-plugin: evidence-grounded RL for video LLMs (Zoom-Zero, VideoZoomer) as an EasyR1 plugin.

Two methods over one shared core. The core is this package's top-level modules, host-free (never EasyR1, Ray or
vLLM): ``spans``, ``tags`` (linear-time scanning), ``answers`` (answer letters), ``question``, ``ground_truth``,
``rows``, ``video`` and ``video_store`` (decoding, once per video), ``vision`` (the model's geometry), ``mrope``,
``token_masks``, ``files``, ``readers``, ``journal`` (resumable runs), ``sections`` (recipe sections as options),
``shipped`` (the recipes in the wheel), ``hub`` (where a model loads from), ``errors``, ``cpu_compat`` (CPU torch
builds) and ``lazy`` (package faces).
Zoom-Zero lives in :mod:`.gvqa`, VideoZoomer in :mod:`.agent`; :mod:`.engine` drives vLLM for both; ``inference``,
``eval``, ``data`` and ``synthetic`` are tools over both; ``integrations`` puts them in other tools' plugin systems;
``hosts/easyr1`` is the only code that knows EasyR1; ``commands`` (the CLI, the demos) sits on top.
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

__all__ = sorted(_NAMES)
