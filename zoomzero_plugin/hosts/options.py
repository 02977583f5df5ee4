"""zoomzero's options: a recipe's plugin sections, read once into one options object per recipe, on either host.

Both hosts' recipes hold the same sections with the same meaning: an EasyR1 recipe in
``worker.reward.reward_function_kwargs`` (EasyR1 rejects new top-level keys), a verl recipe in its ``zoomzero:``
section (its reward's own kwargs under ``reward``)::

    components: [format, iou, accuracy, zoom]     # the reward (zoomzero:gvqa; zoomzero:videozoomer: weights only)
    weights: {zoom: 1.0}
    zoom: {enable: true, fps: 1.0, max_visual_tokens: 8192, min_frame_pixels: 12544, max_frame_pixels: 602112,
           max_new_tokens: 4, no_spans: skip, uniform_frames: 20, prompt: paper}  # pixels of 28-px tokens
    tokenadv: {eps: 1.0e-6, std: population, over_turns: false}
    agent: {prompt: train, max_assistant_turns: 5, max_calls: 4, max_frames_per_call: 16, …}

:func:`read_options` reads them into :class:`RecipeOptions`, which every hook of each host is handed (the checks, the
zoom pass, the rollout, TokenAdv, the dry run's description); each host's ``recipe_options(config)`` finds the
sections in its own config and reads them once per recipe. A ``zoom`` or ``agent`` section
turns the zoom pass or the VideoZoomer rollout on unless it says ``enable: false``. Each holds its method's budget as
one object given inline, as the section's own keys: :class:`~zoomzero_plugin.gvqa.zoom.ZoomBudget` (the zoom pass's
frame pixel bounds, when not given, are the paper's V_min..V_max tokens per frame in the model's own pixels) and
:class:`~zoomzero_plugin.agent.AgentBudget`, whose defaults (the papers') are not typed again here.
``zoom.max_visual_tokens`` is L_v of both passes: the coarse pass gets it through ``MODEL_SEQ_LEN`` even when the
zoom pass is off. A section that cannot be read is None in :class:`RecipeOptions`, its problems (unknown keys with
the known ones listed, each wrong value; one line each, naming the key where the host's recipe keeps it) among its
``problems``, which the recipe check reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from zoomzero_plugin.agent.budget import AgentBudget
from zoomzero_plugin.agent.prompts import PROMPTS
from zoomzero_plugin.agent.render import CLIP_AS
from zoomzero_plugin.agent.reward import AgentRewardConfig
from zoomzero_plugin.engine.schedule import SCHEDULES
from zoomzero_plugin.errors import ConfigError, format_problems
from zoomzero_plugin.gvqa.advantages import ANSWER_COMPONENTS, GLUE_COMPONENTS, STD_KINDS
from zoomzero_plugin.gvqa.prompts import DEFAULT_PROMPT_STYLE, PROMPT_STYLES
from zoomzero_plugin.gvqa.reward import RewardConfig
from zoomzero_plugin.gvqa.zoom import BUDGET_KEYS, NO_SPANS, UNIFORM_FRAMES, ZoomBudget, paper_budget
from zoomzero_plugin.sections import SectionError, build, one_of, section_of
from zoomzero_plugin.vision import DEFAULT_GEOMETRY, VisionGeometry

KWARGS = "worker.reward.reward_function_kwargs"  # where EasyR1 keeps the sections: the names messages are built with
EASYR1_CONFIG = f"the EasyR1 config {KWARGS}"
GVQA, VIDEOZOOMER = "zoomzero:gvqa", "zoomzero:videozoomer"
# what videozoomer_reward returns per response
VIDEOZOOMER_COMPONENTS = ("accuracy", "format", "tool", "looked", "grounding")
SECTIONS = ("zoom", "tokenadv", "agent")  # the section keys this plugin owns (beside its reward's own kwargs)
# the zoom budget's pixel bounds: when a section leaves them out, the paper's tokens per frame in the model's pixels
FRAME_PIXELS = ("min_frame_pixels", "max_frame_pixels")
AGENT_BUDGET_KEYS = tuple(AgentBudget().to_dict())


@dataclass(frozen=True)
class ZoomOptions:
    """The zoom pass (Zoom-Zero §4.1–4.2): Eq. 3 budget over the predicted spans, answer-only prompt."""

    enable: bool = False
    """Run the fine pass after each rollout (its answer is the zoom reward)."""
    max_new_tokens: int = 4
    """Tokens the fine pass may generate: a letter, or ``<answer>B`` (read with or without its closing tag)."""
    no_spans: str = "skip"
    """skip: no fine pass without valid spans (zoom reward 0) | uniform: it reads uniform frames (authors' code)."""
    uniform_frames: int = UNIFORM_FRAMES
    """Frames over the whole video for ``no_spans: uniform``."""
    prompt: str = DEFAULT_PROMPT_STYLE
    """paper: the authors' fine-pass prompt | concise: this package's wording."""
    budget: ZoomBudget = field(default=ZoomBudget(), metadata={"inline": BUDGET_KEYS})
    """Eq. 3 (L_v ``max_visual_tokens``, s ``fps``, V_min..V_max as ``min_frame_pixels``/``max_frame_pixels``,
    ``max_frames``, ``min_clip_seconds``), given as the section's own keys; the coarse pass gets L_v too."""
    model_pixels: tuple[str, ...] = field(default=FRAME_PIXELS, metadata={"section": False})
    """The pixel bounds the section leaves out: the paper's tokens per frame in the model's pixels (:meth:`on`)."""

    def __post_init__(self) -> None:
        where = f"{KWARGS}.zoom"
        one_of(self.no_spans, NO_SPANS, f"{where}.no_spans")
        one_of(self.prompt, PROMPT_STYLES, f"{where}.prompt")
        if self.max_new_tokens < 1 or self.uniform_frames < 2:
            raise ValueError(f"{where}: max_new_tokens must be >= 1 and uniform_frames >= 2")

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | None) -> ZoomOptions:
        """The options of a ``zoom`` section (None: no section, the pass off). SectionError names each problem."""
        if section is None:
            return cls()
        options = build(cls, section, f"{KWARGS}.zoom", {"enable": True})
        return replace(options, model_pixels=tuple(k for k in FRAME_PIXELS if k not in section))

    def on(self, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ZoomBudget:
        """The Eq. 3 budget on a model of ``geometry`` (its own, from its processor)."""
        paper = paper_budget(None, geometry)
        return replace(self.budget.with_geometry(geometry), **{k: getattr(paper, k) for k in self.model_pixels})

    def uniform_budget(self, duration: float, geometry: VisionGeometry = DEFAULT_GEOMETRY) -> ZoomBudget:
        """The budget of ``no_spans: uniform``: ``uniform_frames`` frames over the whole video."""
        budget = self.on(geometry)
        return replace(budget, max_frames=self.uniform_frames, fps=max(budget.fps, self.uniform_frames / duration))

    def to_section(self) -> dict[str, Any]:
        """The section as read (a pixel bound the model's geometry gives: None)."""
        return {**section_of(self), **dict.fromkeys(self.model_pixels)}


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
        one_of(self.std, STD_KINDS, f"{KWARGS}.tokenadv.std")
        if not self.glue_components or not self.answer_components:
            raise ValueError(f"{KWARGS}.tokenadv: glue_components and answer_components must not be empty")

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | None) -> TokenAdvOptions:
        """The options of a ``tokenadv`` section (None: the defaults). SectionError names each problem."""
        if section is None:
            return cls()
        turns = section.get("over_turns") is True
        defaults = {"glue_components": TURN_CALL_COMPONENTS, "answer_components": TURN_ANSWER_COMPONENTS}
        return build(cls, section, f"{KWARGS}.tokenadv", defaults if turns else {})

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> TokenAdvOptions:
        """The options as a batch carries them (``dataclasses.asdict``, lists for tuples)."""
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in stored.items()})


@dataclass(frozen=True)
class AgentOptions:
    """The VideoZoomer multi-turn rollout (``reward_function_kwargs.agent``): the agent's budget plus these."""

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
    budget: AgentBudget = field(default=AgentBudget(), metadata={"inline": AGENT_BUDGET_KEYS})
    """The agent's budgets, given as the section's own keys (AgentBudget's fields)."""

    def __post_init__(self) -> None:
        where = f"{KWARGS}.agent"
        one_of(self.prompt, sorted(PROMPTS), f"{where}.prompt")
        if self.frame_cache_mb < 1:
            raise ValueError(f"{where}.frame_cache_mb must be >= 1, got {self.frame_cache_mb}")
        one_of(self.schedule, SCHEDULES, f"{where}.schedule")
        one_of(self.clip_as, CLIP_AS, f"{where}.clip_as")

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | None) -> AgentOptions:
        """The options of an ``agent`` section (None: no section, the rollout off); also how the rollout workers
        read the section :meth:`to_section` sent them. SectionError names each problem."""
        return cls() if section is None else build(cls, section, f"{KWARGS}.agent", {"enable": True})

    def to_section(self) -> dict[str, Any]:
        """The section that builds these options again (what travels to the rollout workers)."""
        return section_of(self)


@dataclass(frozen=True)
class RewardOptions:
    """The reward function's own kwargs as this plugin's rewards read them: ``components``, ``weights`` and
    ``normalize`` (``zoomzero:gvqa``: :class:`~zoomzero_plugin.gvqa.reward.RewardConfig`), or ``weights`` and the
    agent's per-call frames (``zoomzero:videozoomer``: :class:`~zoomzero_plugin.agent.reward.AgentRewardConfig`)."""

    name: str | None = None
    """The reward name the recipe's reward function is (``zoomzero:gvqa``, ``zoomzero:videozoomer``), else None."""
    config: RewardConfig | AgentRewardConfig | None = None
    """The reward's own configuration (None when it is not one of this plugin's)."""

    @property
    def components(self) -> tuple[str, ...] | None:
        """What the reward returns per response (TokenAdv's inputs), when it is one of this plugin's."""
        if isinstance(self.config, RewardConfig):
            return self.config.components
        return VIDEOZOOMER_COMPONENTS if self.name == VIDEOZOOMER else None

    @classmethod
    def from_kwargs(cls, name: str | None, kwargs: Mapping[str, Any], agent: AgentOptions | None) -> RewardOptions:
        """The reward ``name``'s options from the kwargs EasyR1 passes it. ValueError naming the problem."""
        try:
            if name == GVQA:
                config = RewardConfig.from_kwargs(
                    kwargs.get("components"), kwargs.get("weights"), kwargs.get("normalize", True)
                )
            elif name == VIDEOZOOMER:
                config = AgentRewardConfig.from_kwargs(kwargs.get("weights"), (agent or AgentOptions()).budget)
            else:
                return cls()
        except ValueError as e:
            raise SectionError([f"{KWARGS}: {e}"]) from None
        return cls(name, config)


@dataclass(frozen=True)
class RecipeOptions:
    """One recipe's plugin sections, read once. A section that cannot be read is None, its problems in
    ``problems`` (one line each, naming the key, e.g. ``worker.reward.reward_function_kwargs.<section>.<key>``)."""

    zoom: ZoomOptions | None
    tokenadv: TokenAdvOptions | None
    agent: AgentOptions | None
    reward: RewardOptions | None
    problems: tuple[str, ...] = ()
    config: str = EASYR1_CONFIG
    """Where the sections were read from, as :meth:`checked`'s message names it."""

    @property
    def zoom_pass(self) -> bool:
        return self.zoom is not None and self.zoom.enable

    @property
    def agent_rollout(self) -> bool:
        return self.agent is not None and self.agent.enable

    def checked(self) -> RecipeOptions:
        """These options, when every section could be read; else :class:`ConfigError` listing the problems."""
        if self.problems:
            raise ConfigError(format_problems(list(self.problems), self.config))
        return self


def read_options(
    name: str | None,
    kwargs: Mapping[str, Any] | None,
    where: str = KWARGS,
    config: str = EASYR1_CONFIG,
    reward_where: str | None = None,
) -> RecipeOptions:
    """Every section of ``kwargs`` (a recipe's ``reward_function_kwargs``, its reward function being ``name``).
    ``where`` is where the host's recipe keeps the sections (a verl recipe: ``zoomzero``) and ``reward_where`` the
    reward's own kwargs (default: beside them, as EasyR1's): each problem names its key there; ``config`` names the
    whole in :meth:`RecipeOptions.checked`'s message."""
    kwargs = kwargs or {}
    problems: list[str] = []

    def read(make, *args):
        try:
            return make(*args)
        except SectionError as e:
            problems.extend(e.problems)
            return None

    def section(key: str, make):
        value = kwargs.get(key)
        if value is not None and not isinstance(value, Mapping):
            problems.append(f"{KWARGS}.{key} must be a mapping, got {value!r}")
            return None
        return read(make, value)

    zoom = section("zoom", ZoomOptions.from_section)
    tokenadv = section("tokenadv", TokenAdvOptions.from_section)
    agent = section("agent", AgentOptions.from_section)
    sections = len(problems)
    reward = read(RewardOptions.from_kwargs, name, kwargs, agent)
    # the classes name EasyR1's places; a host that keeps the sections elsewhere gets its own
    named = [p.replace(KWARGS, where) for p in problems[:sections]]
    named += [p.replace(KWARGS, reward_where or where) for p in problems[sections:]]
    return RecipeOptions(zoom, tokenadv, agent, reward, tuple(named), config)
