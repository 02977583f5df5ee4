"""VideoZoomer's ``<video_zoom>`` loop as a verl agent loop (``videozoomer``): one trajectory per call of ``run``.

The protocol is the agent's own (:mod:`zoomzero_plugin.agent`: one environment for evaluation, SFT export and both
hosts' rollouts): the first prompt is the authors' system prompt and the question with the labelled overview frames
(images); each turn is sampled up to its first ``</video_zoom>`` and read by :meth:`~zoomzero_plugin.agent.Trajectory.
step`; a call's clip (or an error text) becomes an observation turn appended after ``<|im_end|>``, exactly as
:mod:`zoomzero_plugin.agent.render` writes it. The clip is its frames as images (each after its time label, the
authors' way) or, with ``agent.clip_as: video``, one video after its time range, whose metadata gives vLLM and the
trainer's processor the clip's own rate: its ``second_per_grid_ts`` then reaches M-RoPE in training (the host's
``hf_processor.rope_index`` seam) as it did in vLLM. verl's own tool loop cannot do this: a tool returning video
raises ``NotImplementedError`` there, and its positions ignore a clip's rate.

Budgets are the agent's: each turn may generate ``min(max_new_tokens, what is left of the response)``; an observation
that would not fit (with room for one more token) ends the trajectory there (``total_tokens``), so a response is cut
at a turn boundary, never inside an image. Observation tokens are in the response and out of the loss
(``response_mask`` 0); the sampler's log-prob of every sampled token is kept (0 elsewhere).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import torch
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from zoomzero_plugin.agent import Trajectory, get_prompts, question_text
from zoomzero_plugin.agent.clips import clip_video
from zoomzero_plugin.agent.frames import FrameReader
from zoomzero_plugin.agent.protocol import STOP
from zoomzero_plugin.agent.render import IM_END, QWEN_IMAGE, first_prompt, observation_block, observation_text
from zoomzero_plugin.ground_truth import GroundTruth, truth_letter

from .options import recipe_options
from .rows import clip_metadata, media_kind, row_video, trajectory_seed
from .sampler_check import MEDIA

NAME = "videozoomer"
IMAGE_PAD, VIDEO_PAD = "<|image_pad|>", "<|video_pad|>"


def user_text(truth: Any, messages: Sequence[Any]) -> str:
    """The first user turn's text: the ground truth's question and options, else the row's own user text."""
    if truth is not None and not (isinstance(truth, str) and truth_letter(truth) is not None):
        parsed = GroundTruth.parse(truth)
        if parsed.question.strip():
            return question_text(parsed.question, parsed.options)
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            items = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
            return "".join("<video>" if i.get("type") == "video" else str(i.get("text", "")) for i in items)
    raise ValueError("the row has no user message to take the question from")


@register(NAME)
class VideoZoomerAgentLoop(AgentLoopBase):
    """The ``<video_zoom>`` loop; registered as ``videozoomer``."""

    NAME = NAME

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        options = recipe_options(self.config).checked()
        self.agent, self.budget = options.agent, options.agent.budget
        self.prompts = get_prompts(self.agent.prompt)
        self.total = min(self.budget.max_response_tokens, int(self.rollout_config.response_length))
        self.eos = {self.tokenizer.eos_token_id}
        ids = self.tokenizer.convert_tokens_to_ids
        self.image_pad, self.video_pad = ids(IMAGE_PAD), ids(VIDEO_PAD)
        self.merge = int(self.processor.image_processor.merge_size)

    # -- tokens --------------------------------------------------------------------------------------------------

    @lru_cache(maxsize=64)  # frames of a video share one size: one processor call per size
    def image_tokens(self, width: int, height: int) -> int:
        image = torch.zeros((3, height, width), dtype=torch.uint8)
        t, h, w = self.processor.image_processor(images=[image], return_tensors="pt")["image_grid_thw"][0].tolist()
        return t * h * w // self.merge**2

    def video_tokens(self, video: tuple[torch.Tensor, dict[str, Any]]) -> int:
        frames, metadata = video
        out = self.processor.video_processor(
            videos=[frames], video_metadata=[metadata], do_sample_frames=False, return_tensors="pt"
        )
        t, h, w = out["video_grid_thw"][0].tolist()
        return t * h * w // self.merge**2

    def encode(self, text: str, images: Sequence[Any], videos: Sequence[Any]) -> list[int]:
        """``text``'s tokens with each image or video placeholder expanded to its item's tokens (in order)."""
        sizes = iter([self.image_tokens(i.width, i.height) for i in images])
        lengths = iter([self.video_tokens(v) for v in videos])
        out: list[int] = []
        for token in self.tokenizer.encode(text, add_special_tokens=False):
            if token == self.image_pad:
                out += [token] * next(sizes)
            elif token == self.video_pad:
                out += [token] * next(lengths)
            else:
                out.append(token)
        return out

    # -- media ---------------------------------------------------------------------------------------------------

    def read(self, reader: FrameReader, indices: Sequence[int]) -> list[Any]:
        return reader.read(list(indices), self.budget.max_frame_pixels, self.budget.min_frame_pixels)

    def clip(self, reader: FrameReader, frames: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """(images, videos) of one observation's frames: images, or one video timed by its own rate."""
        if not frames:
            return [], []
        if self.agent.clip_as != "video":
            return self.read(reader, [f.frame for f in frames]), []
        timing = clip_video(frames, reader.info, int(self.processor.video_processor.temporal_patch_size))
        pictures = self.read(reader, timing.indices)
        tensor = torch.stack([torch.from_numpy(_array(p)).permute(2, 0, 1) for p in pictures])
        return [], [(tensor, clip_metadata(len(pictures), timing.sample_fps))]

    # -- the loop ------------------------------------------------------------------------------------------------

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        messages = list(kwargs["raw_prompt"])
        reader = await self.loop.run_in_executor(None, FrameReader, row_video(messages))
        trajectory = Trajectory(reader.info, self.budget, self.prompts)
        question = user_text((kwargs.get("reward_model") or {}).get("ground_truth"), messages)
        images = await self.loop.run_in_executor(None, self.read, reader, [f.frame for f in trajectory.overview])
        videos: list[Any] = []
        first = first_prompt(
            self.tokenizer.apply_chat_template, self.prompts.system, trajectory.user_parts(question), QWEN_IMAGE
        )
        prompt_ids = self.encode(first, images, [])
        response, mask, logprobs = [], [], []
        served: dict[str, Any] = {}  # what verl's server says of the requests (the weights' steps: staleness checks)
        truncated = False
        while not trajectory.done:
            left = self.total - len(response)
            limit = min(self.budget.max_new_tokens, left)
            params = {**sampling_params, "max_tokens": limit, "stop": [STOP], "include_stop_str_in_output": True}
            if params.get("temperature", 1.0) > 0:  # sampled: a reproducible draw per trajectory and turn
                params["seed"] = trajectory_seed(self.rollout_config.seed, kwargs, len(trajectory.steps))
            out = await self.server_manager.generate(
                request_id=uuid.uuid4().hex,
                prompt_ids=prompt_ids + response,
                sampling_params=params,
                image_data=list(images) or None,
                video_data=list(videos) or None,
            )
            served = _served(served, out.extra_fields)
            tokens = list(out.token_ids)[:limit]
            ended = bool(tokens) and tokens[-1] in self.eos
            text = self.tokenizer.decode(tokens[:-1] if ended else tokens, skip_special_tokens=False)
            cut = len(tokens) == limit and not ended and not text.endswith(STOP) and left <= self.budget.max_new_tokens
            response += tokens
            mask += [1] * len(tokens)
            logprobs += list(out.log_probs or [0.0] * len(tokens))[: len(tokens)]
            truncated = cut
            step = trajectory.step(text, cut=cut)
            if step.observation is None:
                break
            new_images, new_videos = await self.loop.run_in_executor(None, self.clip, reader, step.observation.frames)
            block = IM_END + observation_block(observation_text(step.observation, self.agent.clip_as))
            ids = self.encode(block, new_images, new_videos)
            if len(response) + len(ids) + 1 > self.total:  # no room for the observation and one more token
                truncated = True
                trajectory.withhold()
                break
            response += ids
            mask += [0] * len(ids)
            logprobs += [0.0] * len(ids)
            images += new_images
            videos += new_videos
        media = {"images": images} | ({"videos": videos} if videos else {})
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response,
            response_mask=mask,
            response_logprobs=logprobs if sampling_params.get("logprobs") else None,
            multi_modal_data=media,
            num_turns=2 * len(trajectory.steps) + 1,
            metrics=AgentLoopMetrics(),
            extra_fields={
                **served,
                "turns": len(trajectory.steps),
                "calls": trajectory.calls,
                "errors": trajectory.errors,
                "clip_frames": trajectory.clip_frames,
                "end": trajectory.end,
                "truncated": truncated,
                MEDIA: media_kind(media),
            },
        )


def _served(so_far: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """verl's server fields over a trajectory's turns, as verl's tool loop keeps them: the first turn's, then the
    latest weights' step (``max_global_steps``) of any later turn."""
    if not so_far:
        return dict(fields or {})
    latest = (fields or {}).get("max_global_steps")
    return {**so_far, "max_global_steps": latest} if latest else so_far


def _array(picture: Any) -> Any:
    import numpy as np

    return np.asarray(picture.convert("RGB"))
