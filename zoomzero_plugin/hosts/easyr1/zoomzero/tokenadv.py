"""zoomzero's advantage estimators for EasyR1: ``tokenadv`` and its fair baseline ``grpo_sum``.

``tokenadv`` (Zoom-Zero Eq. 4–5, core :func:`~zoomzero_plugin.token_adv`) works with any reward function that
returns per-response components (``format``, ``iou``, ``accuracy``, ``zoom``…; the host keeps them in the
batch). ``prepare`` adds the glue-token mask, found from the tokenizer's own decoding of the generated ids,
and the options; ``compute`` normalises each component within its prompt group and gives glue tokens the
mean of the glue components' advantages and every other response token the mean of the answer components'.
``token_level_rewards`` is not read (see the KL check).

The grounding tokens are the ``<glue>…</glue>`` block (Zoom-Zero), or with ``tokenadv.over_turns`` the
``<video_zoom>…</video_zoom>`` calls of a multi-turn trajectory's sampled turns, each turn read as the protocol reads
it (:func:`~zoomzero_plugin.agent.protocol.turn_call_ranges`: a turn that leaves ``<video_zoom>`` open and answers
is an answer turn) (TokenAdv over turns: calls learn from ``format`` and ``grounding``, the other sampled tokens
from ``format`` and ``accuracy``; observation tokens, outside ``response_mask``, get nothing).

``grpo_sum`` is plain GRPO on the summed reward (``token_level_rewards`` summed per response, as EasyR1's
``grpo``), normalised with the same ``tokenadv.eps`` and ``tokenadv.std`` (population by default, where
EasyR1's ``grpo`` uses the sample std): "GRPO vs TokenAdv" then differs only in credit assignment.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import lru_cache
from typing import Any

from zoomzero_plugin.agent.protocol import turn_call_ranges
from zoomzero_plugin.gvqa.advantages import grpo_advantage, token_adv
from zoomzero_plugin.gvqa.parsing import glue_char_ranges
from zoomzero_plugin.token_masks import TokenMasker

from ...options import TokenAdvOptions
from ..batch_step import COMPONENT_PREFIX
from ..hookspecs import AdvantageEstimator
from .options import recipe_options

NAME = "tokenadv"
GRPO_SUM = "grpo_sum"
GLUE_MASK = "glue_mask"  # (bs, response_length) bool: the grounding tokens (glue block, or tool calls over turns)


@lru_cache(maxsize=4)
def _masker(tokenizer: Any, over_turns: bool = False) -> TokenMasker:
    return TokenMasker(tokenizer, turn_call_ranges if over_turns else glue_char_ranges)


def prepare(trainer: Any, batch: Any) -> dict[str, float]:
    """Add ``glue_mask`` and the options (``meta_info["tokenadv"]``) to a training batch; returns the share of
    response tokens that learn from the grounding rewards (``tokenadv/grounding_token_share``)."""
    options = recipe_options(trainer.config).checked().tokenadv
    masker = _masker(trainer.tokenizer, options.over_turns)
    mask = batch.batch["response_mask"]
    batch.batch[GLUE_MASK] = masker(batch.batch["responses"], mask)
    batch.meta_info[NAME] = asdict(options)
    tokens = float(mask.sum())
    return {f"{NAME}/grounding_token_share": float(batch.batch[GLUE_MASK].sum()) / tokens if tokens else 0.0}


def compute(data: Any, gamma: float = 1.0, lam: float = 1.0) -> tuple[Any, Any]:
    """(advantages, returns), both (bs, response_length) float32, zero on padding."""
    components = {k[len(COMPONENT_PREFIX) :]: v for k, v in data.batch.items() if k.startswith(COMPONENT_PREFIX)}
    if GLUE_MASK not in data.batch or not components or NAME not in data.meta_info:
        raise RuntimeError(
            "tokenadv needs the reward components and the glue mask in the batch; the easyr1 plugin host adds "
            "them while it builds each batch (RayPPOTrainer._make_batch_data seam). Is the host active in the "
            "process running the trainer? (`easyr1 doctor`)"
        )
    options = TokenAdvOptions.from_stored(data.meta_info[NAME])
    try:
        return token_adv(
            components,
            data.batch[GLUE_MASK],
            data.batch["response_mask"],
            data.non_tensor_batch["uid"],
            eps=options.eps,
            glue_components=options.glue_components,
            answer_components=options.answer_components,
            std=options.std,
        )
    except ValueError as e:
        raise ValueError(
            f"tokenadv: {e}. The reward function returned {sorted(components)}; choose the groups with "
            "worker.reward.reward_function_kwargs.tokenadv.glue_components / answer_components"
        ) from None


def prepare_grpo_sum(trainer: Any, batch: Any) -> None:
    """Add the options (``meta_info["tokenadv"]``: eps and std) to a training batch."""
    batch.meta_info[NAME] = asdict(recipe_options(trainer.config).checked().tokenadv)


def compute_grpo_sum(data: Any, gamma: float = 1.0, lam: float = 1.0) -> tuple[Any, Any]:
    """(advantages, returns), both (bs, response_length) float32: the group-normalised summed reward."""
    if NAME not in data.meta_info:
        raise RuntimeError(
            "grpo_sum needs its options in the batch; the easyr1 plugin host adds them while it builds "
            "each batch. Is the host active in the process running the trainer? (`easyr1 doctor`)"
        )
    options = TokenAdvOptions.from_stored(data.meta_info[NAME])
    scores = data.batch["token_level_rewards"].sum(-1)
    return grpo_advantage(scores, data.batch["response_mask"], data.non_tensor_batch["uid"], options.eps, options.std)


TOKENADV = AdvantageEstimator(  # reads the reward components; trainer checks as for grpo (the defaults)
    name=NAME,
    compute=compute,
    prepare=prepare,
    summary="TokenAdv (Zoom-Zero Eq. 4-5): per-component group normalisation; glue tokens learn from "
    "format/zoom/iou, the other tokens from format/zoom/accuracy",
)


GRPO_SUM_ESTIMATOR = AdvantageEstimator(  # reads token_level_rewards only; trainer checks as for grpo
    name=GRPO_SUM,
    compute=compute_grpo_sum,
    prepare=prepare_grpo_sum,
    needs_reward_components=False,
    summary="GRPO on the summed reward with tokenadv's eps and std (population by default): the Table 5 baseline",
)
