"""zoomzero's options, read from ``worker.reward.reward_function_kwargs`` (EasyR1 rejects new top-level keys).

```yaml
reward_function_kwargs:
  zoom: {enable: true, fps: 1.0, max_visual_tokens: 8192, min_frame_pixels: 12544, max_frame_pixels: 602112,
         max_new_tokens: 4, no_spans: skip, uniform_frames: 16, prompt: paper}  # pixels of 28-px tokens
  tokenadv: {eps: 1.0e-6, std: population, over_turns: false}
  agent: {prompt: train, max_assistant_turns: 5, max_calls: 4, max_frames_per_call: 16, max_response_tokens: 32768, …}
```
A ``zoom`` or ``agent`` section turns the zoom pass or the VideoZoomer rollout on unless it says ``enable: false``.
``agent`` takes :class:`~zoomzero_plugin.agent.AgentBudget`'s fields besides its own. Unknown keys are errors. The
budget defaults are :class:`~zoomzero_plugin.gvqa.zoom.ZoomBudget`'s and
:class:`~zoomzero_plugin.agent.AgentBudget`'s (the papers'), not typed again here; the zoom pass's frame pixel bounds,
when not given, are the paper's V_min..V_max tokens per frame in the model's own pixels (its vision geometry).
``max_visual_tokens`` is L_v of both passes: the coarse pass gets it through ``MODEL_SEQ_LEN`` even when the zoom
pass is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from zoomzero_plugin.agent.budget import AgentBudget
from zoomzero_plugin.agent.prompts import PROMPTS
from zoomzero_plugin.agent.render import CLIP_AS
from zoomzero_plugin.engine.schedule import check_schedule
from zoomzero_plugin.gvqa.advantages import ANSWER_COMPONENTS, GLUE_COMPONENTS, STD_KINDS
from zoomzero_plugin.gvqa.prompts import DEFAULT_PROMPT_STYLE, check_style
from zoomzero_plugin.gvqa.zoom import NO_SPANS, ZoomBudget, paper_budget
from zoomzero_plugin.sections import build
from zoomzero_plugin.vision import DEFAULT_GEOMETRY, VisionGeometry

_PAPER = ZoomBudget()  # the paper's budget: the one source of the zoom pass's defaults

KWARGS = "worker.reward.reward_function_kwargs"


def _section(kwargs: Mapping[str, Any] | None, name: str) -> Mapping[str, Any] | None:
    section = (kwargs or {}).get(name)
    if section is not None and not isinstance(section, Mapping):
        raise ValueError(f"{KWARGS}.{name} must be a mapping, got {section!r}")
    return section


@dataclass(frozen=True)
class ZoomOptions:
    """The zoom pass (Zoom-Zero §4.1–4.2): Eq. 3 budget over the predicted spans, answer-only prompt."""

    enable: bool = False
    """Run the fine pass after each rollout (its answer is the zoom reward)."""
    fps: float = _PAPER.fps
    """s in Eq. 3: frames per second sampled over the predicted spans."""
    max_visual_tokens: int = _PAPER.max_visual_tokens
    """L_v: visual context tokens of a pass (the coarse pass's too, through MODEL_SEQ_LEN)."""
    min_frame_pixels: int | None = None
    """V_min as pixels per frame (default: the paper's 8 tokens per frame, in the model's pixels)."""
    max_frame_pixels: int | None = None
    """V_max as pixels per frame (default: the paper's 384 tokens per frame, in the model's pixels)."""
    max_new_tokens: int = 4
    """Tokens the fine pass may generate: a letter, or ``<answer>B`` (read with or without its closing tag)."""
    no_spans: str = "skip"
    """skip: no fine pass without valid spans (zoom reward 0) | uniform: it reads uniform frames (authors' code)."""
    uniform_frames: int = 16
    """Frames over the whole video for ``no_spans: uniform``."""
    max_frames: int = _PAPER.max_frames
    """Frames of the fine pass at most."""
    min_clip_seconds: float = _PAPER.min_clip_seconds
    """Seconds: shorter predicted spans are widened to this."""
    prompt: str = DEFAULT_PROMPT_STYLE
    """paper: the authors' fine-pass prompt | concise: this package's wording."""

    def __post_init__(self) -> None:
        if self.no_spans not in NO_SPANS:
            raise ValueError(f"{KWARGS}.zoom.no_spans must be one of {NO_SPANS}, got {self.no_spans!r}")
        if self.max_new_tokens < 1 or self.uniform_frames < 2:
            raise ValueError(f"{KWARGS}.zoom: max_new_tokens must be >= 1 and uniform_frames >= 2")
        try:
            check_style(self.prompt)
        except ValueError as e:
            raise ValueError(f"{KWARGS}.zoom.prompt: {e}") from None
        self.budget()  # validates the Eq. 3 numbers

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any] | None) -> ZoomOptions:
        section = _section(kwargs, "zoom")
        if section is None:
            return cls()
        return build(cls, section, f"{KWARGS}.zoom", {"enable": True})

    def budget(self, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ZoomBudget:
        """The Eq. 3 budget of these options on a model of ``geometry`` (its own, from its processor)."""
        paper = paper_budget(None, geometry)
        low, high = self.min_frame_pixels, self.max_frame_pixels
        return replace(
            paper,
            max_visual_tokens=self.max_visual_tokens,
            fps=self.fps,
            max_frames=self.max_frames,
            min_clip_seconds=self.min_clip_seconds,
            min_frame_pixels=paper.min_frame_pixels if low is None else low,
            max_frame_pixels=paper.max_frame_pixels if high is None else high,
        )

    def uniform_budget(self, duration: float, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ZoomBudget:
        """The budget of ``no_spans: uniform``: ``uniform_frames`` frames over the whole video."""
        budget = self.budget(geometry)
        return replace(budget, max_frames=self.uniform_frames, fps=max(budget.fps, self.uniform_frames / duration))


TURN_CALL_COMPONENTS = ("format", "grounding")  # TokenAdv over turns: what tool-call tokens learn from
TURN_ANSWER_COMPONENTS = ("format", "accuracy")  # … and every other sampled token


@dataclass(frozen=True)
class TokenAdvOptions:
    """Group normalisation of ``tokenadv`` (Eq. 4–5) and of ``grpo_sum``, which reads the same section so an
    ablation changes only ``algorithm.adv_estimator``; and which components drive which tokens (tokenadv).

    The grounding tokens are the ``<glue>…</glue>`` block (Zoom-Zero), or, with ``over_turns``, the
    ``<video_zoom>…</video_zoom>`` calls of a multi-turn trajectory, whose defaults then become
    ``TURN_CALL_COMPONENTS`` / ``TURN_ANSWER_COMPONENTS``."""

    eps: float = 1e-6
    """Added to the group's standard deviation (reward units)."""
    std: str = "population"
    """population (divide by n, the paper's Table 8) | sample (n - 1, as EasyR1's ``grpo``)."""
    glue_components: tuple[str, ...] = GLUE_COMPONENTS
    """Reward components whose advantages drive the tokens inside ``<glue>…</glue>``."""
    answer_components: tuple[str, ...] = ANSWER_COMPONENTS
    """Reward components whose advantages drive every other response token."""
    over_turns: bool = False
    """TokenAdv over turns: the grounding tokens are the ``<video_zoom>`` calls of a multi-turn trajectory."""

    def __post_init__(self) -> None:
        if not self.eps > 0:
            raise ValueError(f"{KWARGS}.tokenadv.eps must be > 0, got {self.eps}")
        if self.std not in STD_KINDS:
            raise ValueError(f"{KWARGS}.tokenadv.std must be one of {STD_KINDS}, got {self.std!r}")
        if not self.glue_components or not self.answer_components:
            raise ValueError(f"{KWARGS}.tokenadv: glue_components and answer_components must not be empty")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any] | None) -> TokenAdvOptions:
        section = _section(kwargs, "tokenadv")
        if section is None:
            return cls()
        defaults = (
            {"glue_components": TURN_CALL_COMPONENTS, "answer_components": TURN_ANSWER_COMPONENTS}
            if section.get("over_turns") is True
            else {}
        )
        return build(cls, section, f"{KWARGS}.tokenadv", defaults)


@dataclass(frozen=True)
class AgentOptions:
    """The VideoZoomer multi-turn rollout (``reward_function_kwargs.agent``): the agent's budgets plus these."""

    enable: bool = False
    """Run the multi-turn rollout (a section enables it unless it says false)."""
    prompt: str = "train"
    """The authors' system prompt variant the policy reads: train | eval | sft."""
    sampling_logprobs: bool = False
    """Keep the sampler's log-prob of every sampled token in the batch (``rollout_log_probs``, 0 elsewhere)."""
    frame_cache_mb: int = 2048
    """Decoded frames each rollout worker keeps between rounds and for its actor (MB)."""
    schedule: str = "continuous"
    """When turns are generated: continuous (a trajectory's next turn goes to the engine as soon as its observation is
    ready, while other turns still generate) | rounds (one engine call per round; every trajectory waits for the
    round's slowest turn). The same trajectories either way (greedy decoding: the same tokens)."""
    clip_as: str = "images"
    """How a call's clip reaches the policy: images (each after its time label, the authors' way) | video (one video
    after its time range, timed by its own frames: Qwen3-VL's timestamps, Qwen2.5-VL's time-aligned M-RoPE)."""
    budget: AgentBudget = AgentBudget()
    """The agent's budgets, given as the section's own keys (AgentBudget's fields)."""

    def __post_init__(self) -> None:
        if self.prompt not in PROMPTS:
            raise ValueError(f"{KWARGS}.agent.prompt must be one of {sorted(PROMPTS)}, got {self.prompt!r}")
        if self.frame_cache_mb < 1:
            raise ValueError(f"{KWARGS}.agent.frame_cache_mb must be >= 1, got {self.frame_cache_mb}")
        check_schedule(self.schedule, f"{KWARGS}.agent.schedule")
        if self.clip_as not in CLIP_AS:
            raise ValueError(f"{KWARGS}.agent.clip_as must be one of {list(CLIP_AS)}, got {self.clip_as!r}")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any] | None) -> AgentOptions:
        section = _section(kwargs, "agent")
        if section is None:
            return cls()
        where, budget_fields = f"{KWARGS}.agent", sorted(f.name for f in fields(AgentBudget))
        own = {k: v for k, v in section.items() if k not in budget_fields}
        if "budget" in own:
            raise ValueError(f"{where}: give the budget's fields directly ({budget_fields})")
        unknown = sorted(set(own) - {f.name for f in fields(cls)})
        if unknown:
            known = sorted({f.name for f in fields(cls)} - {"budget"} | set(budget_fields))
            raise ValueError(f"{where}: unknown option(s) {unknown}; known: {known}")
        budget = AgentBudget.from_section(section, where)  # as the reward reads it
        return replace(build(cls, own, where, {"enable": True}), budget=budget)

    def to_dict(self) -> dict[str, Any]:
        """The section that builds these options again (what travels to the rollout workers)."""
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "budget"}
        return {**own, **self.budget.to_dict()}
