"""The recipe check of zoomzero's features: one function per feature (zoom, tokenadv, reward, agent) over the recipe's
options, read once (:func:`~.options.recipe_options`), collected with the sections' own problems into the one list
the dry run prints (``easyr1_check_config``); and the checks of a recipe's first rows, with the measure of the
VideoZoomer rollout's first prompt that the dry run also shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zoomzero_plugin.agent import Trajectory, get_prompts
from zoomzero_plugin.agent.frames import FrameReader
from zoomzero_plugin.agent.render import QWEN_IMAGE, first_prompt
from zoomzero_plugin.agent.reward import read_truth
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.rows import label_hidden
from zoomzero_plugin.vision import merged_grid

from ...options import GVQA, KWARGS, VIDEOZOOMER, AgentOptions, RecipeOptions
from ..checks import model_type
from ..multiturn import MROPE_MODEL_TYPES
from ..recipe import local_processor, video_path
from .agent_rollout import user_text
from .options import recipe_options, reward_name
from .tokenadv import TOKENADV

TEXT_ALLOWANCE = 512  # tokens of chat template, question and options in the zoom prompt


def check_recipe(config: Any) -> list[str]:
    """Every problem with the recipe's plugin sections and what its features need of the rest of the recipe."""
    options = recipe_options(config)
    problems = list(options.problems)
    for check in (zoom_problems, tokenadv_problems, reward_problems, agent_problems):
        problems += check(config, options)
    return problems


def zoom_problems(config: Any, options: RecipeOptions) -> list[str]:
    """What the zoom pass needs: an estimator with no greedy baseline, its answers scored, its context."""
    zoom, components = options.zoom, options.reward and options.reward.components
    if zoom is None:
        return []
    if not zoom.enable:
        if components is not None and "zoom" in components:
            return [
                f"'zoom' is in {KWARGS}.components but the zoom pass is off ({KWARGS}.zoom.enable): it would always "
                "be 0"
            ]
        return []
    problems = []
    if str(config.algorithm.adv_estimator) == "remax":
        problems.append(
            "the zoom pass does not support algorithm.adv_estimator=remax (its greedy baseline would need its own zoom "
            "pass)"
        )
    if components is not None and "zoom" not in components:
        problems.append(
            f"{KWARGS}.zoom enables the zoom pass but 'zoom' is not in {KWARGS}.components: its answers would be "
            "ignored"
        )
    context = config.worker.rollout.max_model_len or config.data.max_prompt_length + config.data.max_response_length
    tokens = zoom.budget.max_visual_tokens
    if tokens + TEXT_ALLOWANCE + zoom.max_new_tokens > context:
        problems.append(
            f"{KWARGS}.zoom.max_visual_tokens={tokens} visual tokens (+~{TEXT_ALLOWANCE} text, +{zoom.max_new_tokens} "
            f"answer) do not fit the rollout context of {context} tokens (worker.rollout.max_model_len, or "
            "data.max_prompt_length + data.max_response_length)"
        )
    if zoom.max_new_tokens > config.data.max_response_length:
        problems.append(
            f"{KWARGS}.zoom.max_new_tokens exceeds data.max_response_length={config.data.max_response_length}"
        )
    return problems


def tokenadv_problems(config: Any, options: RecipeOptions) -> list[str]:
    """What TokenAdv needs: the KL not in the reward it never reads, components for both token groups, turns."""
    tokenadv, components = options.tokenadv, options.reward and options.reward.components
    if tokenadv is None:
        return []
    problems = []
    if tokenadv.over_turns and not options.agent_rollout:
        problems.append(
            f"{KWARGS}.tokenadv.over_turns learns from <video_zoom> calls, but no multi-turn rollout makes them "
            f"({KWARGS}.agent is not set)"
        )
    algorithm = config.algorithm
    if str(algorithm.adv_estimator) != TOKENADV.name:
        return problems
    if not algorithm.use_kl_loss and not algorithm.disable_kl:
        problems.append(
            "algorithm.adv_estimator=tokenadv builds advantages from the reward components and never reads "
            "token_level_rewards, so the KL penalty EasyR1 puts into the reward (algorithm.use_kl_loss=false) would "
            "be silently dropped: set algorithm.use_kl_loss=true (KL as a loss) or algorithm.disable_kl=true"
        )
    for role, names in (("glue", tokenadv.glue_components), ("answer", tokenadv.answer_components)):
        if components is not None and not set(names) & set(components):
            problems.append(
                f"tokenadv: no enabled reward component drives the {role} tokens (needs one of {list(names)}, "
                f"{KWARGS}.components is {list(components)})"
            )
    return problems


def reward_problems(config: Any, options: RecipeOptions) -> list[str]:
    """What the multi-turn rollout's responses need: the reward that reads them."""
    if options.agent_rollout and reward_name(config) != VIDEOZOOMER:
        return [
            f"{KWARGS}.agent turns each response into a multi-turn exchange: score it with "
            f"worker.reward.reward_function: {VIDEOZOOMER}"
        ]
    return []


def agent_problems(config: Any, options: RecipeOptions) -> list[str]:
    """What the VideoZoomer rollout needs of the recipe: an estimator, room for its responses and images, M-RoPE."""
    agent = options.agent
    if agent is None or not agent.enable:
        return []
    problems = []
    estimator = str(config.algorithm.adv_estimator)
    if estimator == "remax":
        problems.append(
            "the VideoZoomer rollout does not support algorithm.adv_estimator=remax (its greedy baseline would need "
            "its own multi-turn rollout)"
        )
    elif estimator in ("gae", "reinforce_plus_plus"):
        problems.append(
            f"algorithm.adv_estimator={estimator} discounts returns along response_mask, which the VideoZoomer rollout "
            "interrupts at every observation: use grpo, rloo, tokenadv or grpo_sum"
        )
    if options.zoom_pass:
        problems.append(f"{KWARGS}.agent and {KWARGS}.zoom are two different methods: enable one of them")
    response, budget = config.data.max_response_length, agent.budget
    if budget.max_response_tokens > response:
        problems.append(
            f"{KWARGS}.agent.max_response_tokens={budget.max_response_tokens} exceeds data.max_response_length="
            f"{response}, the response width every trajectory must fit (observations included)"
        )
    limit = config.worker.rollout.limit_images
    if limit and limit < budget.max_images:
        problems.append(
            f"worker.rollout.limit_images={limit} is below {KWARGS}.agent.max_images={budget.max_images}: vLLM would "
            "refuse a conversation with more images"
        )
    model = config.worker.actor.model
    kind = model_type(str(model.model_path), bool(model.trust_remote_code))
    if kind is not None and kind not in MROPE_MODEL_TYPES:
        problems.append(
            f"the VideoZoomer rollout lays out Qwen-VL M-RoPE positions ({', '.join(MROPE_MODEL_TYPES)}); the model "
            f"is '{kind}' (worker.actor.model.model_path)"
        )
    return problems


# -- the first rows ------------------------------------------------------------------------------------------


def row_problems(config: Any, rows: Sequence[Mapping[str, Any]], split: str) -> list[str]:
    """The rows' problems for the features the recipe uses (none when its sections cannot be read)."""
    options = recipe_options(config)
    if options.problems:  # reported by the recipe check
        return []
    if options.agent is not None and options.agent.enable:
        return agent_row_problems(config, rows, split, options.agent)
    if options.reward is not None and options.reward.name == GVQA:
        return gvqa_row_problems(config, rows, split, options)
    return []


def gvqa_row_problems(config: Any, rows: Sequence[Mapping[str, Any]], split: str, options: RecipeOptions) -> list[str]:
    """gvqa rows carry a GroundTruth JSON; the zoom pass also needs its question."""
    problems = []
    key = config.data.answer_key
    for i, row in enumerate(rows):
        try:
            truth = GroundTruth.parse(row.get(key))
        except ValueError as e:
            problems.append(f"{split} row {i}: data.answer_key '{key}' is not a zoomzero ground truth ({e})")
            continue
        if label_hidden(truth):
            problems.append(
                f"{split} row {i} ({truth.qid}): its label is hidden (a test split); it cannot be trained or "
                "validated on"
            )
        elif options.zoom_pass and not truth.question.strip():
            problems.append(
                f"{split} row {i} ({truth.qid}): the ground truth has no 'question' for the zoom pass to re-ask"
            )
    return problems


@dataclass(frozen=True)
class FirstPrompt:
    """The first prompt of one row, measured: overview frames, tokens per frame, text tokens, in all."""

    frames: int
    tokens_per_frame: int
    text_tokens: int

    @property
    def tokens(self) -> int:
        return self.frames * self.tokens_per_frame + self.text_tokens


def measure_first_prompt(
    tokenizer: Any, processor: Any, video: str, user_text: str, options: AgentOptions
) -> FirstPrompt:
    """What the rollout's first prompt for this row will hold (decodes one frame of the video)."""
    reader = FrameReader(video)
    trajectory = Trajectory(reader.info, options.budget, get_prompts(options.prompt))
    frame = reader.read([0], options.budget.max_frame_pixels, options.budget.min_frame_pixels)[0]
    h, w = merged_grid(processor.image_processor, frame.width, frame.height)
    text = first_prompt(
        tokenizer.apply_chat_template, trajectory.prompts.system, trajectory.user_parts(user_text), QWEN_IMAGE
    )
    frames = len(trajectory.overview)
    return FirstPrompt(frames, h * w, len(tokenizer.encode(text, add_special_tokens=False)) - frames)


def agent_row_problems(config: Any, rows: Sequence[Mapping[str, Any]], split: str, options: AgentOptions) -> list[str]:
    """Rows the VideoZoomer rollout cannot start from: not one video, no answer letter, or a first prompt longer
    than data.max_prompt_length."""
    data = config.data
    loaded = local_processor(config)
    problems = []
    for i, row in enumerate(rows):
        where = f"{split} row {i}"
        videos = row.get(data.video_key)
        prompt = str(row.get(data.prompt_key, ""))
        if not isinstance(videos, list) or len(videos) != 1:
            problems.append(
                f"{where}: the VideoZoomer rollout needs exactly one video in '{data.video_key}', got {videos!r}"
            )
            continue
        try:
            read_truth(row.get(data.answer_key))  # what the reward reads
            text = user_text(row.get(data.answer_key), lambda p=prompt: p)
        except ValueError as e:
            problems.append(f"{where}: data.answer_key '{data.answer_key}' holds no answer letter ({e})")
            continue
        if loaded is None:
            continue
        try:
            measured = measure_first_prompt(*loaded, video_path(data, videos[0]), text, options)
        except Exception as e:  # noqa: BLE001 - reported (an unreadable video is reported by the host too)
            problems.append(f"{where}: cannot measure the first prompt ({type(e).__name__}: {e})")
            continue
        if measured.tokens > data.max_prompt_length:
            problems.append(
                f"{where}: the agent's first prompt is {measured.tokens} tokens ({measured.frames} overview frames x "
                f"{measured.tokens_per_frame} + {measured.text_tokens} text) > data.max_prompt_length="
                f"{data.max_prompt_length}"
            )
    return problems
