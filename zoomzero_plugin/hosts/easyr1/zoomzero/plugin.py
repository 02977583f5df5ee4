"""zoomzero-plugin's own EasyR1 plugin, registered through the ``easyr1.plugins`` entry point like any other.

Adds: the reward names ``zoomzero:gvqa`` and ``zoomzero:videozoomer`` (the installed ``gvqa/gvqa_reward.py`` and
``agent/videozoomer_reward.py``), the advantage estimators ``tokenadv`` and ``grpo_sum`` (its fair GRPO baseline), the
``zoom`` rollout hook (when ``reward_function_kwargs.zoom`` enables it), the ``videozoomer`` multi-turn rollout
(when ``reward_function_kwargs.agent`` enables it), ``MODEL_SEQ_LEN`` for the coarse pass's visual budget, and
checks of the recipe and its rows for all of them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from zoomzero_plugin.agent import videozoomer_reward
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa import gvqa_reward
from zoomzero_plugin.gvqa.reward import RewardConfig
from zoomzero_plugin.gvqa.zoom import plan_zoom
from zoomzero_plugin.rows import label_hidden
from zoomzero_plugin.vision import VisionGeometry, load_geometry, visual_token_ratio

from ..checks import model_type
from ..errors import ConfigError
from ..hookspecs import hookimpl
from ..multiturn import MROPE_MODEL_TYPES
from ..recipe import head_rows, local_processor
from . import agent_rollout
from .options import KWARGS, AgentOptions, TokenAdvOptions, ZoomOptions
from .tokenadv import GRPO_SUM_ESTIMATOR, TOKENADV
from .zoom_hook import ZoomHook, coarse_frames

GVQA = "zoomzero:gvqa"
VIDEOZOOMER = "zoomzero:videozoomer"
VIDEOZOOMER_COMPONENTS = ("accuracy", "format", "tool", "grounding")  # what videozoomer_reward returns per response
TEXT_ALLOWANCE = 512  # tokens of chat template, question and options in the zoom prompt


def gvqa_target() -> str:
    return f"{os.path.realpath(gvqa_reward.__file__)}:compute_score"


def videozoomer_target() -> str:
    return f"{os.path.realpath(videozoomer_reward.__file__)}:compute_score"


def _reward_target(config: Any) -> str | None:
    reward = config.worker.reward
    return (
        f"{os.path.realpath(reward.reward_function)}:{reward.reward_function_name}" if reward.reward_function else None
    )


def uses_gvqa(config: Any) -> bool:
    return _reward_target(config) == gvqa_target()


def uses_videozoomer(config: Any) -> bool:
    return _reward_target(config) == videozoomer_target()


def _kwargs(config: Any) -> Mapping[str, Any]:
    return config.worker.reward.reward_function_kwargs or {}


@hookimpl
def easyr1_reward_functions() -> Mapping[str, str]:
    return {GVQA: gvqa_target(), VIDEOZOOMER: videozoomer_target()}


@hookimpl
def easyr1_advantage_estimators() -> Sequence[Any]:
    return [TOKENADV, GRPO_SUM_ESTIMATOR]


@hookimpl
def easyr1_rollouts() -> Sequence[Any]:
    return [agent_rollout.ROLLOUT]


@hookimpl
def easyr1_option_keys() -> Sequence[str]:
    return ("zoom", "tokenadv", "agent")


@hookimpl
def easyr1_check_config(config: Any) -> list[str]:
    """tokenadv, zoom and agent requirements, option syntax, reward components."""
    problems: list[str] = []
    kwargs = _kwargs(config)
    zoom = tokenadv = components = agent = None
    try:
        zoom = ZoomOptions.from_kwargs(kwargs)
    except ValueError as e:
        problems.append(str(e))
    try:
        tokenadv = TokenAdvOptions.from_kwargs(kwargs)
    except ValueError as e:
        problems.append(str(e))
    try:
        agent = AgentOptions.from_kwargs(kwargs)
    except ValueError as e:
        problems.append(str(e))
    if uses_gvqa(config):
        try:
            components = RewardConfig.from_kwargs(
                kwargs.get("components"), kwargs.get("weights"), kwargs.get("normalize", True)
            ).components
        except ValueError as e:
            problems.append(f"{KWARGS}: {e}")
    elif uses_videozoomer(config):
        components = VIDEOZOOMER_COMPONENTS
    if agent is not None:
        problems += agent_problems(config, agent, zoom)
    if tokenadv is not None and tokenadv.over_turns and not (agent is not None and agent.enable):
        problems.append(
            f"{KWARGS}.tokenadv.over_turns learns from <video_zoom> calls, but no multi-turn rollout "
            f"makes them ({KWARGS}.agent is not set)"
        )
    algorithm = config.algorithm
    if str(algorithm.adv_estimator) == TOKENADV.name:
        if not algorithm.use_kl_loss and not algorithm.disable_kl:
            problems.append(
                "algorithm.adv_estimator=tokenadv builds advantages from the reward components and never reads "
                "token_level_rewards, so the KL penalty EasyR1 puts into the reward (algorithm.use_kl_loss=false) "
                "would be silently dropped: set algorithm.use_kl_loss=true (KL as a loss) or algorithm.disable_kl=true"
            )
        if tokenadv is not None and components is not None:
            for role, names in (("glue", tokenadv.glue_components), ("answer", tokenadv.answer_components)):
                if not set(names) & set(components):
                    problems.append(
                        f"tokenadv: no enabled reward component drives the {role} tokens (needs one of {list(names)}, "
                        f"{KWARGS}.components is {list(components)})"
                    )
    if zoom is not None and zoom.enable:
        if str(algorithm.adv_estimator) == "remax":
            problems.append(
                "the zoom pass does not support algorithm.adv_estimator=remax (its greedy baseline would need its "
                "own zoom pass)"
            )
        if components is not None and "zoom" not in components:
            problems.append(
                f"{KWARGS}.zoom enables the zoom pass but 'zoom' is not in {KWARGS}.components: its answers would be "
                "ignored"
            )
        rollout = config.worker.rollout
        context = rollout.max_model_len or config.data.max_prompt_length + config.data.max_response_length
        if zoom.max_visual_tokens + TEXT_ALLOWANCE + zoom.max_new_tokens > context:
            problems.append(
                f"{KWARGS}.zoom.max_visual_tokens={zoom.max_visual_tokens} visual tokens (+~{TEXT_ALLOWANCE} text, "
                f"+{zoom.max_new_tokens} "
                f"answer) do not fit the rollout context of {context} tokens (worker.rollout.max_model_len, or "
                "data.max_prompt_length + data.max_response_length)"
            )
        if zoom.max_new_tokens > config.data.max_response_length:
            problems.append(
                f"{KWARGS}.zoom.max_new_tokens exceeds data.max_response_length={config.data.max_response_length}"
            )
    elif (
        zoom is not None and components is not None and "zoom" in components
    ):  # (an invalid zoom section is reported above)
        problems.append(
            f"'zoom' is in {KWARGS}.components but the zoom pass is off ({KWARGS}.zoom.enable): it would always be 0"
        )
    return problems


def agent_problems(config: Any, agent: AgentOptions, zoom: ZoomOptions | None) -> list[str]:
    """What the VideoZoomer rollout needs of the recipe."""
    if not agent.enable:
        return []
    problems = []
    if not uses_videozoomer(config):
        problems.append(
            f"{KWARGS}.agent turns each response into a multi-turn exchange: score it with "
            f"worker.reward.reward_function: {VIDEOZOOMER}"
        )
    estimator = str(config.algorithm.adv_estimator)
    if estimator == "remax":
        problems.append(
            "the VideoZoomer rollout does not support algorithm.adv_estimator=remax (its greedy baseline "
            "would need its own multi-turn rollout)"
        )
    elif estimator in ("gae", "reinforce_plus_plus"):
        problems.append(
            f"algorithm.adv_estimator={estimator} discounts returns along response_mask, which the "
            "VideoZoomer rollout interrupts at every observation: use grpo, rloo, tokenadv or grpo_sum"
        )
    if zoom is not None and zoom.enable:
        problems.append(f"{KWARGS}.agent and {KWARGS}.zoom are two different methods: enable one of them")
    response = config.data.max_response_length
    if agent.budget.max_response_tokens > response:
        problems.append(
            f"{KWARGS}.agent.max_response_tokens={agent.budget.max_response_tokens} exceeds "
            f"data.max_response_length={response}, the response width every trajectory must fit "
            "(observations included)"
        )
    limit = config.worker.rollout.limit_images
    if limit and limit < agent.budget.max_images:
        problems.append(
            f"worker.rollout.limit_images={limit} is below {KWARGS}.agent.max_images="
            f"{agent.budget.max_images}: vLLM would refuse a conversation with more images"
        )
    model = config.worker.actor.model
    kind = model_type(str(model.model_path), bool(model.trust_remote_code))
    if kind is not None and kind not in MROPE_MODEL_TYPES:
        problems.append(
            f"the VideoZoomer rollout lays out Qwen-VL M-RoPE positions ({', '.join(MROPE_MODEL_TYPES)}); "
            f"the model is '{kind}' (worker.actor.model.model_path)"
        )
    return problems


@hookimpl
def easyr1_check_rows(config: Any, rows: Sequence[Mapping[str, Any]], split: str) -> list[str]:
    """gvqa rows carry a GroundTruth JSON (the zoom pass also needs its question and options); agent rows one video
    and a first prompt that fits data.max_prompt_length."""
    if AgentOptions.from_kwargs(_kwargs(config)).enable:
        return agent_rollout.row_problems(config, rows, split)
    if not uses_gvqa(config):
        return []
    problems = []
    zoom = ZoomOptions.from_kwargs(_kwargs(config))
    for i, row in enumerate(rows):
        try:
            truth = GroundTruth.parse(row.get(config.data.answer_key))
        except ValueError as e:
            problems.append(
                f"{split} row {i}: data.answer_key '{config.data.answer_key}' is not a zoomzero ground truth ({e})"
            )
            continue
        if label_hidden(truth):
            problems.append(
                f"{split} row {i} ({truth.qid}): its label is hidden (a test split); it cannot be trained "
                "or validated on"
            )
            continue
        if zoom.enable and not truth.question.strip():
            problems.append(
                f"{split} row {i} ({truth.qid}): the ground truth has no 'question' for the zoom pass to re-ask"
            )
    return problems


@hookimpl
def easyr1_rollout_hooks(config: Any, tokenizer: Any, processor: Any) -> list[Any]:
    """the zoom pass (Zoom-Zero §4.1-4.2), when reward_function_kwargs.zoom enables it"""
    zoom = ZoomOptions.from_kwargs(_kwargs(config))
    if not zoom.enable:
        return []
    return [ZoomHook(zoom, tokenizer, processor, config.data.video_fps, config.worker.reward.skip_special_tokens)]


def _example_plan(config: Any, zoom: ZoomOptions) -> str | None:
    """Coarse vs zoom pass on the first training row's ground-truth spans (the local model's vision geometry)."""
    try:
        truth = GroundTruth.parse(head_rows(config.data.train_files, 1)[0][config.data.answer_key])
        loaded = local_processor(config)
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None
    if loaded is None:
        return None
    plan = plan_zoom(list(truth.spans), truth.duration, zoom.budget(VisionGeometry.of(loaded[1])))
    fps = config.data.video_fps
    coarse = f"coarse pass ~{coarse_frames(truth.duration, fps)} frames (data.video_fps={fps})"
    if plan is None:
        return f"train row 0 ({truth.duration:.1f} s) has no ground-truth spans; {coarse}"
    return (
        f"train row 0 ({truth.duration:.1f} s, ground-truth spans {[list(s) for s in truth.spans]}): {coarse}; zoom "
        f"pass on those spans {plan.frames} frames x {plan.tokens_per_frame:.0f} tokens/frame = {plan.tokens:.0f} "
        "tokens"
    )


def uses_zoomzero(config: Any) -> bool:
    """The recipe uses one of this plugin's features: its reward, an estimator, or a zoom section."""
    estimators = {TOKENADV.name, GRPO_SUM_ESTIMATOR.name}
    return uses_gvqa(config) or str(config.algorithm.adv_estimator) in estimators or "zoom" in _kwargs(config)


@hookimpl
def easyr1_job_env(config: Any) -> dict[str, str]:
    """MODEL_SEQ_LEN from zoom.max_visual_tokens, so the coarse pass has the visual budget L_v, zoom pass on or off
    (not for the VideoZoomer rollout: it shows frames as images, and qwen-vl-utils' video budget is not read)."""
    if not uses_zoomzero(config) or AgentOptions.from_kwargs(_kwargs(config)).enable:
        return {}
    zoom = ZoomOptions.from_kwargs(_kwargs(config))
    model = config.worker.actor.model
    try:
        geometry = load_geometry(str(model.model_path), bool(model.trust_remote_code))
    except ValueError as e:
        raise ConfigError(
            f"worker.actor.model.model_path: {e}; the coarse pass's visual budget (MODEL_SEQ_LEN) "
            "depends on the model's token size"
        ) from None
    return {"MODEL_SEQ_LEN": str(model_seq_len(zoom.max_visual_tokens, geometry))}


def model_seq_len(max_visual_tokens: int, geometry: VisionGeometry) -> int:
    """qwen-vl-utils' ``MODEL_SEQ_LEN`` that gives each coarse-pass video ``max_visual_tokens`` of the model's tokens.

    qwen-vl-utils (it reads the variable at import) caps a video at ``0.9 · MODEL_SEQ_LEN · q²`` pixels, ``q`` its
    own token side as EasyR1 calls it (no ``image_patch_size``, no ``total_pixels``); without this the coarse pass
    would get ~115k tokens per video. A model whose tokens cover ``f`` pixels a side spends ``pixels / f²`` tokens.
    """
    return math.ceil(max_visual_tokens / 0.9 * visual_token_ratio(geometry))


@hookimpl
def easyr1_describe(config: Any) -> dict[str, Any]:
    """Effective zoom / TokenAdv / reward settings."""
    kwargs = _kwargs(config)
    out: dict[str, Any] = {}
    if uses_gvqa(config):
        reward = RewardConfig.from_kwargs(
            kwargs.get("components"), kwargs.get("weights"), kwargs.get("normalize", True)
        )
        out["reward"] = {
            "function": f"{GVQA} -> {gvqa_target()}",
            "components": list(reward.components),
            "weights": {k: reward.weight(k) for k in reward.components},
            "normalize": reward.normalize,
        }
    agent = AgentOptions.from_kwargs(kwargs)
    if agent.enable:
        out.update(agent_rollout.describe(config, agent))
    zoom = ZoomOptions.from_kwargs(kwargs)
    out["zoom"] = {"enable": False} if not zoom.enable else {k: getattr(zoom, k) for k in zoom.__dataclass_fields__}
    if zoom.enable and (example := _example_plan(config, zoom)):
        out["zoom example"] = example
    estimator = str(config.algorithm.adv_estimator)
    if estimator == TOKENADV.name:
        options = TokenAdvOptions.from_kwargs(kwargs)
        out["tokenadv"] = {
            "eps": options.eps,
            "std": options.std,
            "grounding tokens": "<video_zoom> calls (over_turns)" if options.over_turns else "<glue> block",
            "glue_components": list(options.glue_components),
            "answer_components": list(options.answer_components),
            "kl": "loss (use_kl_loss)"
            if config.algorithm.use_kl_loss
            else "disabled"
            if config.algorithm.disable_kl
            else "in reward (ignored!)",
        }
    elif estimator == GRPO_SUM_ESTIMATOR.name:
        options = TokenAdvOptions.from_kwargs(kwargs)
        out["grpo_sum"] = {"eps": options.eps, "std": options.std, "reward": "token_level_rewards summed per response"}
    return out
