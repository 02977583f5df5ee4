"""zoomzero-plugin's own EasyR1 plugin, registered through the ``easyr1.plugins`` entry point like any other.

Adds: the reward names ``zoomzero:gvqa`` and ``zoomzero:videozoomer`` (the installed ``gvqa/gvqa_reward.py`` and
``agent/videozoomer_reward.py``), the advantage estimators ``tokenadv`` and ``grpo_sum`` (its fair GRPO baseline), the
``zoom`` rollout hook (when ``reward_function_kwargs.zoom`` enables it), the ``videozoomer`` multi-turn rollout
(when ``reward_function_kwargs.agent`` enables it), ``MODEL_SEQ_LEN`` for the coarse pass's visual budget, the checks
of the recipe and its rows for all of them (:mod:`.checks`), and the dry run's view of their settings. Every hook
reads the recipe's sections through :func:`~.options.recipe_options`, once per recipe.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from zoomzero_plugin.agent.reward import COMPONENTS as REWARD_COMPONENTS, AgentRewardConfig
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.reward import RewardConfig
from zoomzero_plugin.gvqa.zoom import plan_zoom
from zoomzero_plugin.vision import VisionGeometry, load_geometry, visual_token_ratio

from ...options import GVQA, KWARGS, SECTIONS, AgentOptions, RecipeOptions, ZoomOptions
from ..errors import ConfigError
from ..hookspecs import hookimpl
from ..recipe import head_rows, local_processor, video_path
from . import agent_rollout, checks
from .agent_rollout import user_text
from .options import recipe_options, reward_targets
from .tokenadv import GRPO_SUM_ESTIMATOR, TOKENADV
from .zoom_hook import ZoomHook, coarse_frames


@hookimpl
def easyr1_reward_functions() -> Mapping[str, str]:
    return reward_targets()


@hookimpl
def easyr1_advantage_estimators() -> Sequence[Any]:
    return [TOKENADV, GRPO_SUM_ESTIMATOR]


@hookimpl
def easyr1_rollouts() -> Sequence[Any]:
    return [agent_rollout.ROLLOUT]


@hookimpl
def easyr1_option_keys() -> Sequence[str]:
    return SECTIONS


@hookimpl
def easyr1_check_config(config: Any) -> list[str]:
    """the sections' problems, then what zoom, tokenadv, the reward and the agent need of the recipe."""
    return checks.check_recipe(config)


@hookimpl
def easyr1_check_rows(config: Any, rows: Sequence[Mapping[str, Any]], split: str) -> list[str]:
    """gvqa rows carry a GroundTruth JSON (the zoom pass also needs its question and options); agent rows one video
    and a first prompt that fits data.max_prompt_length."""
    return checks.row_problems(config, rows, split)


@hookimpl
def easyr1_rollout_hooks(config: Any, tokenizer: Any, processor: Any) -> list[Any]:
    """the zoom pass (Zoom-Zero §4.1-4.2), when reward_function_kwargs.zoom enables it"""
    options = recipe_options(config).checked()
    if not options.zoom_pass:
        return []
    skip = config.worker.reward.skip_special_tokens
    return [ZoomHook(options.zoom, tokenizer, processor, config.data.video_fps, skip)]


def uses_zoomzero(config: Any, options: RecipeOptions) -> bool:
    """The recipe uses one of this plugin's Zoom-Zero features: its reward, an estimator, or a zoom section."""
    estimators = {TOKENADV.name, GRPO_SUM_ESTIMATOR.name}
    gvqa = options.reward is not None and options.reward.name == GVQA
    kwargs = config.worker.reward.reward_function_kwargs or {}
    return gvqa or str(config.algorithm.adv_estimator) in estimators or "zoom" in kwargs


@hookimpl
def easyr1_job_env(config: Any) -> dict[str, str]:
    """MODEL_SEQ_LEN from zoom.max_visual_tokens, so the coarse pass has the visual budget L_v, zoom pass on or off
    (not for the VideoZoomer rollout: it shows frames as images, and qwen-vl-utils' video budget is not read)."""
    options = recipe_options(config).checked()
    if not uses_zoomzero(config, options) or options.agent_rollout:
        return {}
    model = config.worker.actor.model
    try:
        geometry = load_geometry(str(model.model_path), bool(model.trust_remote_code))
    except ValueError as e:
        raise ConfigError(
            f"worker.actor.model.model_path: {e}; the coarse pass's visual budget (MODEL_SEQ_LEN) "
            "depends on the model's token size"
        ) from None
    return {"MODEL_SEQ_LEN": str(model_seq_len(options.zoom.budget.max_visual_tokens, geometry))}


def model_seq_len(max_visual_tokens: int, geometry: VisionGeometry) -> int:
    """qwen-vl-utils' ``MODEL_SEQ_LEN`` that gives each coarse-pass video ``max_visual_tokens`` of the model's tokens.

    qwen-vl-utils (it reads the variable at import) caps a video at ``0.9 · MODEL_SEQ_LEN · q²`` pixels, ``q`` its
    own token side as EasyR1 calls it (no ``image_patch_size``, no ``total_pixels``); without this the coarse pass
    would get ~115k tokens per video. A model whose tokens cover ``f`` pixels a side spends ``pixels / f²`` tokens.
    """
    return math.ceil(max_visual_tokens / 0.9 * visual_token_ratio(geometry))


# -- the dry run's view ----------------------------------------------------------------------------------------


@hookimpl
def easyr1_describe(config: Any) -> dict[str, Any]:
    """Effective zoom / TokenAdv / reward / agent settings."""
    options = recipe_options(config)
    if options.problems:
        raise ConfigError(f"{len(options.problems)} problem(s) in {KWARGS}")
    out: dict[str, Any] = {}
    reward = options.reward.config if options.reward is not None else None
    if isinstance(reward, RewardConfig):
        out["reward"] = {
            "function": f"{options.reward.name} -> {reward_targets()[options.reward.name]}",
            "components": list(reward.components),
            "weights": {k: reward.weight(k) for k in reward.components},
            "normalize": reward.normalize,
        }
    if options.agent_rollout:
        out.update(describe_agent(config, options))
    zoom = options.zoom
    out["zoom"] = zoom.to_section() if zoom.enable else {"enable": False}
    if zoom.enable and (example := _example_plan(config, zoom)):
        out["zoom example"] = example
    estimator, tokenadv = str(config.algorithm.adv_estimator), options.tokenadv
    normalised = {"eps": tokenadv.eps, "std": tokenadv.std}
    if estimator == TOKENADV.name:
        algorithm = config.algorithm
        kl = "in reward (ignored!)" if not algorithm.disable_kl else "disabled"
        out["tokenadv"] = {
            **normalised,
            "grounding tokens": "<video_zoom> calls (over_turns)" if tokenadv.over_turns else "<glue> block",
            "glue_components": list(tokenadv.glue_components),
            "answer_components": list(tokenadv.answer_components),
            "kl": "loss (use_kl_loss)" if algorithm.use_kl_loss else kl,
        }
    elif estimator == GRPO_SUM_ESTIMATOR.name:
        out["grpo_sum"] = {**normalised, "reward": "token_level_rewards summed per response"}
    return out


def _example_plan(config: Any, zoom: ZoomOptions) -> str | None:
    """Coarse vs zoom pass on the first training row's ground-truth spans (the local model's vision geometry)."""
    try:
        truth = GroundTruth.parse(head_rows(config.data.train_files, 1)[0][config.data.answer_key])
        loaded = local_processor(config)
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None
    if loaded is None:
        return None
    plan = plan_zoom(list(truth.spans), truth.duration, zoom.on(VisionGeometry.of(loaded[1])))
    fps = config.data.video_fps
    coarse = f"coarse pass ~{coarse_frames(truth.duration, fps)} frames (data.video_fps={fps})"
    if plan is None:
        return f"train row 0 ({truth.duration:.1f} s) has no ground-truth spans; {coarse}"
    return (
        f"train row 0 ({truth.duration:.1f} s, ground-truth spans {[list(s) for s in truth.spans]}): {coarse}; zoom "
        f"pass on those spans {plan.frames} frames x {plan.tokens_per_frame:.0f} tokens/frame = {plan.tokens:.0f} "
        "tokens"
    )


def describe_agent(config: Any, options: RecipeOptions) -> dict[str, Any]:
    """The rollout, its budgets, the first prompt of train row 0, the reward."""
    agent: AgentOptions = options.agent
    b, reward = agent.budget, options.reward and options.reward.config
    response = config.data.max_response_length
    out: dict[str, Any] = {
        "rollout": f"{agent_rollout.NAME} (plugin rollout: owns generation; prompt variant '{agent.prompt}')",
        "agent budgets": {
            "overview": f"{b.max_overview_frames} frames at {b.overview_fps} fps",
            "per call": f"<= {b.max_frames_per_call} frames",
            "calls": b.max_calls,
            "assistant turns": b.max_assistant_turns,
            "images": b.max_images,
            "tokens per turn": b.max_new_tokens,
            "response tokens": f"{min(b.max_response_tokens, response)} (max_response_tokens "
            f"{b.max_response_tokens}, data.max_response_length {response})",
            "frame pixels": f"{b.min_frame_pixels}..{b.max_frame_pixels}",
        },
        "sampling log-probs kept": agent.sampling_logprobs,
    }
    if isinstance(reward, AgentRewardConfig):
        weights = {name: getattr(reward, name) for name in REWARD_COMPONENTS}
        out["reward"] = {"function": options.reward.name, "weights": weights}
    try:
        data = config.data
        row = head_rows(data.train_files, 1)[0]
        loaded = local_processor(config)
        if loaded is not None:
            text = user_text(row.get(data.answer_key), lambda: str(row[data.prompt_key]))
            m = checks.measure_first_prompt(*loaded, video_path(data, row[data.video_key][0]), text, agent)
            out["first prompt"] = (
                f"train row 0: {m.frames} overview frames x {m.tokens_per_frame} tokens + {m.text_tokens} text = "
                f"{m.tokens} tokens (data.max_prompt_length {data.max_prompt_length})"
            )
    except Exception:  # noqa: BLE001 - the example is optional; the row checks report real problems
        pass
    return out
