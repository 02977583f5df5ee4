"""Command-line options shared by ``zoomzero eval`` and ``zoomzero data filter``: budgets and mode knobs.

Every flag defaults to ``None`` so :func:`resolve` can tell "not given" from "given": unset flags take the paper's
value, or the CPU demo's (``DEMO_DEFAULTS``) when the command runs as a demo. The paper's values are not typed here:
budget flags take :class:`~zoomzero_plugin.gvqa.zoom.ZoomBudget`'s (the benchmark's preset,
:func:`~zoomzero_plugin.gvqa.zoom.paper_budget`), mode flags :class:`~zoomzero_plugin.inference.modes.ModeConfig`'s.
A flag is its field's name (``--max-visual-tokens`` is ``ZoomBudget.max_visual_tokens``; ``--agent-max-calls`` is
``AgentBudget.max_calls``).
"""

from __future__ import annotations

import argparse
from dataclasses import fields
from typing import Any

from ..agent import DEFAULT_PROMPT, PROMPTS, AgentBudget
from ..agent.baseline import NO_TOOL_BUDGET
from ..agent.budget import field_help
from ..agent.render import CLIP_AS
from ..engine.schedule import SCHEDULES
from ..errors import UsageError
from ..gvqa.zoom import BUDGET_KEYS, PAPER_BUDGETS, V_MAX_TOKENS, V_MIN_TOKENS, ZoomBudget, paper_budget
from ..vision import DEFAULT_GEOMETRY, VisionGeometry
from .agent import AgentConfig
from .backend import BACKENDS
from .modes import CHOICES, ModeConfig

_MODE_KEYS = tuple(f.name for f in fields(ModeConfig) if f.name not in ("budget", "agent"))
DEFAULTS: dict[str, Any] = {
    **{k: getattr(ZoomBudget(), k) for k in BUDGET_KEYS},
    **{k: getattr(ModeConfig(), k) for k in _MODE_KEYS},
}
# The agent mode's knobs: agent_<AgentBudget field> (defaults from AgentBudget, the one source), prompt, sampling.
AGENT_BUDGET_KEYS = {f"agent_{f.name}": f.name for f in fields(AgentBudget)}
DEFAULTS.update({key: getattr(AgentBudget(), name) for key, name in AGENT_BUDGET_KEYS.items()})
DEFAULTS.update(
    agent_prompt=DEFAULT_PROMPT,
    agent_temperature=0.0,
    agent_no_tool=False,
    agent_schedule=AgentConfig().schedule,
    agent_clip_as=AgentConfig().clip_as,
)
# --no-tool: the budget defaults of the authors' no-tool evaluation
NO_TOOL_DEFAULTS = {key: getattr(NO_TOOL_BUDGET, name) for key, name in AGENT_BUDGET_KEYS.items()}
# A small visual budget and short responses keep the demo to seconds on a CPU; the random model writes no
# spans, so its fine pass reads uniform frames (the authors' code's fallback). Frames as small as 2 tokens each
# (DEMO_MIN_FRAME_TOKENS, in the model's pixels).
DEMO_DEFAULTS: dict[str, Any] = {
    "max_visual_tokens": 128,
    "max_new_tokens": 32,
    "no_spans": "uniform",
    "window_seconds": 4.0,
    "uniform_frames": 8,
    "agent_max_new_tokens": 48,
}
DEMO_MIN_FRAME_TOKENS = 2
_FRAME_TOKENS = {"min_frame_pixels": V_MIN_TOKENS, "max_frame_pixels": V_MAX_TOKENS}


def _default_text(name: str) -> str:
    if name in _FRAME_TOKENS:
        tokens = _FRAME_TOKENS[name]
        pixels = DEFAULT_GEOMETRY.frame_pixels(tokens)
        return f"{tokens} tokens per frame in the model's pixels: {pixels} for {DEFAULT_GEOMETRY.factor}-px tokens"
    values = sorted({getattr(b, name) for b in PAPER_BUDGETS.values()}) if name in BUDGET_KEYS else [DEFAULTS[name]]
    if len(values) == 1:
        return str(values[0])
    return " or ".join(f"{getattr(b, name)} ({kind} videos)" for kind, b in PAPER_BUDGETS.items()) + ", by --benchmark"


def flag(dest: str) -> str:
    """The flag of an argparse ``dest`` (``max_visual_tokens`` → ``--max-visual-tokens``)."""
    return "--" + dest.replace("_", "-")


def add_flag(parser: argparse._ActionsContainer, name: str, help: str, **kwargs: Any) -> None:
    parser.add_argument(flag(name), dest=name, default=None, help=f"{help} (default: {_default_text(name)})", **kwargs)


def add_agent_budget_flags(group: argparse._ActionsContainer, prefix: str) -> None:
    """One flag per :class:`~zoomzero_plugin.agent.AgentBudget` field, ``--<prefix><field>`` (dest ``<prefix><field>``,
    None when not given), its help the field's docstring and its default: the one generator of the agent's budget
    flags (``zoomzero eval``'s ``--agent-max-calls``, ``data export-sft``'s ``--max-calls``)."""
    helps = field_help()
    for f in fields(AgentBudget):
        help = f"{helps.get(f.name, f.name)} (default: {f.default})"
        group.add_argument(flag(prefix + f.name), dest=prefix + f.name, type=type(f.default), default=None, help=help)


# Each flag's help; its type is its default's (ZoomBudget's, ModeConfig's), its choices the mode's (CHOICES).
BUDGET_HELP = {
    "max_visual_tokens": "L_v: visual tokens per pass",
    "fps": "s: frames per second sampled over the seconds a pass reads",
    "min_frame_pixels": "V_min as pixels per frame",
    "max_frame_pixels": "V_max as pixels per frame",
    "max_frames": "frames per pass at most (the paper's coarse pass: 256)",
    "min_clip_seconds": "shorter predicted spans are widened to this",
}
MODE_HELP = {
    "prompt": "prompt style of the fine-pass and window prompts (the coarse pass uses the row's own)",
    "max_new_tokens": "response tokens of grounding passes",
    "fine_answer": "fine pass: score the option letters (authors' judge) or generate",
    "no_spans": "no valid spans: skip the fine pass (the coarse answer stands), or run it on uniform frames",
    "uniform_frames": "frames of the uniform fallback (--no-spans uniform)",
    "window_seconds": "divide-and-conquer window length",
    "window_times": "windows shown from 0 s (spans shifted back) or told their absolute range; auto: absolute for "
    "models that read timestamps (Qwen3-VL)",
    "window_budget": "every window gets L_v (full) or the windows share it (split)",
    "top_k": "windows whose spans the fine pass reads",
    "dc_final": "final answer: the fine pass's, or the more confident of it and the top window",
    "max_fine_passes": "iterative: fine passes in all at most (1 = coarse-to-fine)",
    "min_shrink": "iterative: a round must cut the span length by more than this fraction",
}


def _add_flags(group: argparse._ActionsContainer, helps: dict[str, str]) -> None:
    for name, help in helps.items():
        kind = {"choices": CHOICES[name]} if name in CHOICES else {"type": type(DEFAULTS[name])}
        add_flag(group, name, help, **kind)


def add_backend_arguments(group: argparse._ActionsContainer, unit: str) -> None:
    """How the model runs (``zoomzero eval``, ``data filter``): ``--backend``, ``--batch-size`` (``unit`` per model
    call), ``--device``, ``--dtype``."""
    group.add_argument(
        "--backend",
        choices=sorted(BACKENDS),
        default="transformers",
        help="transformers (CPU/GPU) or vllm (GPU; needs vLLM installed)",
    )
    group.add_argument("--batch-size", type=int, default=1, help=f"{unit} per step and requests per model call")
    group.add_argument("--device", help="e.g. cpu, cuda, cuda:1 (default: cuda when available)")
    group.add_argument("--dtype", default="auto", help="auto (bf16 on GPU, fp32 on CPU), bfloat16, float16, float32")


def add_resume_arguments(group: argparse._ActionsContainer, results: str, settings: str) -> None:
    """A resumable run's flags (``zoomzero eval``, ``data filter``): ``--restart``, ``--repair`` (of the ``results``
    journal and the ``settings`` file beside it), ``--no-progress``."""
    group.add_argument("--restart", action="store_true", help=f"discard the {results} of an earlier run and start over")
    group.add_argument(
        "--repair",
        action="store_true",
        help=f"resume from damaged {results}: keep their readable lines (the rest is done again), and store this "
        f"run's settings where {settings} is missing or damaged (you vouch that the {results} were made with them)",
    )
    group.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    _add_flags(
        parser.add_argument_group(
            "visual token budget (Zoom-Zero Eq. 3; the same for every pass; defaults: the paper's for the benchmark)"
        ),
        BUDGET_HELP,
    )


def add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("agent mode (VideoZoomer's <video_zoom> tool loop; defaults are the paper's)")
    add_agent_budget_flags(group, "agent_")
    add_flag(
        group,
        "agent_prompt",
        "which of the authors' prompts the model reads: eval (evaluation, answer in "
        "\\boxed{}), train (RL) or sft (the teacher's)",
        choices=sorted(PROMPTS),
    )
    add_flag(
        group,
        "agent_temperature",
        "sampling temperature of every turn (0: greedy, as the authors validate)",
        type=float,
    )
    add_flag(
        group,
        "agent_schedule",
        "when turns are generated: continuous (each question's next turn goes to the "
        "engine as soon as its clip is decoded, while other turns still generate; on vLLM) or rounds (one "
        "generate per round; every question waits for the round's slowest turn). The same predictions either "
        "way; the transformers backend always runs rounds",
        choices=SCHEDULES,
    )
    add_flag(
        group,
        "agent_clip_as",
        "how a call's clip reaches the model: images (each after its time label, as the "
        "authors' checkpoints were trained) or video (one video after its time range, timed by its own frames: "
        "Qwen3-VL's timestamps, Qwen2.5-VL's M-RoPE)",
        choices=CLIP_AS,
    )
    group.add_argument(
        "--no-tool",
        dest="agent_no_tool",
        action="store_true",
        default=None,
        help="the authors' no-tool baseline (scripts/eval_video_notool.sh): system prompt \"You are a "
        'helpful assistant.", the video as one video of frames at 0.2 fps (<= 120, '
        "12,544..100,352 px), one reply of <= 2,048 tokens; the --agent-* budget flags still apply",
    )


def add_mode_arguments(group: argparse._ActionsContainer) -> None:
    """The modes' own knobs (ModeConfig's fields but the budgets)."""
    _add_flags(group, MODE_HELP)


def resolve(
    args: argparse.Namespace,
    demo: bool = False,
    benchmark: str | None = None,
    geometry: VisionGeometry = DEFAULT_GEOMETRY,
) -> dict[str, Any]:
    """Every option's value: given, else the demo's (when ``demo``), else the paper's (budget: ``benchmark``'s,
    its per-frame bounds in the pixels of a model of ``geometry``, the loaded model's once it is known)."""
    paper = {**DEFAULTS, **{k: getattr(paper_budget(benchmark, geometry), k) for k in BUDGET_KEYS}}
    if getattr(args, "agent_no_tool", None):
        paper.update(NO_TOOL_DEFAULTS)
    demo_values = {**DEMO_DEFAULTS, "min_frame_pixels": geometry.frame_pixels(DEMO_MIN_FRAME_TOKENS)}
    out = {}
    for key, default in paper.items():
        given = getattr(args, key, None)
        out[key] = given if given is not None else (demo_values.get(key, default) if demo else default)
    return out


# flag -> (test, what it must be)
_RULES: dict[str, tuple[Any, str]] = {
    "max_visual_tokens": (lambda v: v > 0, "> 0"),
    "fps": (lambda v: v > 0, "> 0"),
    "min_frame_pixels": (lambda v: v > 0, "> 0"),
    "max_frames": (lambda v: v >= 2, ">= 2"),
    "min_clip_seconds": (lambda v: v > 0, "> 0"),
    "max_new_tokens": (lambda v: v >= 1, ">= 1"),
    "uniform_frames": (lambda v: v >= 2, ">= 2"),
    "window_seconds": (lambda v: v > 0, "> 0"),
    "top_k": (lambda v: v >= 1, ">= 1"),
    "max_fine_passes": (lambda v: v >= 1, ">= 1"),
    "min_shrink": (lambda v: 0 <= v < 1, "in [0, 1)"),
}


def check_values(values: dict[str, Any]) -> None:
    """Raise UsageError naming every flag whose resolved value is out of range (NaN included)."""
    bad = [
        f"{flag(k)} must be {what}, got {values[k]}"
        for k, (ok, what) in _RULES.items()
        if k in values and not ok(values[k])
    ]
    if not values["min_frame_pixels"] <= values["max_frame_pixels"]:
        bad.append(
            f"--max-frame-pixels ({values['max_frame_pixels']}) must be >= --min-frame-pixels "
            f"({values['min_frame_pixels']})"
        )
    if bad:
        raise UsageError("; ".join(bad))


def budget_from(values: dict[str, Any], geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ZoomBudget:
    return ZoomBudget(**{k: values[k] for k in BUDGET_KEYS}).with_geometry(geometry)


def agent_config(values: dict[str, Any]) -> AgentConfig:
    budget = AgentBudget(**{name: values[key] for key, name in AGENT_BUDGET_KEYS.items()})
    return AgentConfig(
        budget=budget,
        prompt=values["agent_prompt"],
        temperature=values["agent_temperature"],
        tool=not values["agent_no_tool"],
        schedule=values["agent_schedule"],
        clip_as=values["agent_clip_as"],
    )


def mode_config(values: dict[str, Any], geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ModeConfig:
    """The :class:`ModeConfig` of resolved values, for a model of ``geometry`` (its processor's)."""
    return ModeConfig(
        budget=budget_from(values, geometry), agent=agent_config(values), **{k: values[k] for k in _MODE_KEYS}
    )
