"""Zoom-Zero's two passes as a verl agent loop (``zoomzero``): the coarse pass, then the zoom pass over the cited spans.

The coarse pass is verl's own single-turn loop (the row's prompt and video, sampled as verl samples it). The zoom
pass (Zoom-Zero §4.1–4.2) then reads the response's ``<glue>`` spans (:func:`~zoomzero_plugin.gvqa.parsing.glue_spans`,
as the reward reads them), plans Eq. 3 over their union (:func:`~zoomzero_plugin.gvqa.zoom.plan_zoom`), decodes only
those spans once, through the process's video store (:func:`~zoomzero_plugin.video.fetch_clips`: the coarse pass's
reader and frames are reused), and asks the same policy, greedily, the answer-only prompt over them. The clip reaches
vLLM with its own rate (its metadata), so its temporal positions are the clip's, not 2 fps. A response without valid
spans gets no zoom pass (zoom reward 0), or with ``no_spans: uniform`` a pass over uniform frames of the whole video.

The zoom pass is judged, not trained: its answer letter (``zoom_answer``) and what it looked at travel to the reward
manager in the trajectory's ``extra_fields``; its tokens are not part of the response.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from verl.experimental.agent_loop.agent_loop import register
from verl.experimental.agent_loop.single_turn_agent_loop import SingleTurnAgentLoop

from zoomzero_plugin.answers import answer_letter
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.parsing import glue_spans
from zoomzero_plugin.gvqa.prompts import zoom_prompt
from zoomzero_plugin.gvqa.zoom import ZoomPlan, plan_pass, plan_zoom
from zoomzero_plugin.question import VIDEO_PLACEHOLDER
from zoomzero_plugin.video import fetch_clips
from zoomzero_plugin.vision import VisionGeometry

from .options import recipe_options
from .rows import ZOOM_ANSWER, clip_metadata, media_kind, row_video, trajectory_seed, trajectory_truth
from .sampler_check import MEDIA

NAME = "zoomzero"
GREEDY = {"temperature": 0.0, "top_p": 1.0, "top_k": -1}  # the zoom pass is greedy, as in the EasyR1 host


@register(NAME)
class ZoomZeroAgentLoop(SingleTurnAgentLoop):
    """verl's single-turn loop (the coarse pass), then the zoom pass; registered as ``zoomzero``."""

    NAME = NAME

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.options = recipe_options(self.config).checked()
        self.geometry = VisionGeometry.of(self.processor)
        self.budget = self.options.zoom.on(self.geometry)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        if sampling_params.get("temperature", 1.0) > 0:  # sampled (not greedy validation): a reproducible draw
            sampling_params = {**sampling_params, "seed": trajectory_seed(self.rollout_config.seed, kwargs)}
        output = await super().run(sampling_params, **kwargs)
        output.extra_fields[MEDIA] = media_kind(output.multi_modal_data)
        if self.options.zoom_pass:
            output.extra_fields.update(await self.zoom(output.response_ids, kwargs))
        return output

    def plan(self, text: str, truth: GroundTruth) -> tuple[float, ZoomPlan | None]:
        """(seconds of valid spans, the zoom pass's plan or None) for one coarse response."""
        spans = glue_spans(text, truth.duration)
        plan = plan_zoom(spans, truth.duration, self.budget)
        if plan is None and self.options.zoom.no_spans == "uniform":
            uniform = self.options.zoom.uniform_budget(truth.duration, self.geometry)
            plan = plan_pass([(0.0, truth.duration)], truth.duration, uniform)
        return sum(e - s for s, e in spans), plan

    async def zoom(self, response_ids: list[int], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The zoom pass of one coarse response: its answer and what it read (``extra_fields``)."""
        truth = trajectory_truth(kwargs)
        text = self.tokenizer.decode(response_ids, skip_special_tokens=True)  # as the reward manager decodes it
        seconds, plan = self.plan(text, truth)
        out: dict[str, Any] = {ZOOM_ANSWER: None, "zoom_span_seconds": seconds, "zoom_frames": 0}
        if plan is None:
            return out
        video = row_video(kwargs["raw_prompt"])
        clip = await self.loop.run_in_executor(
            None, lambda: fetch_clips(plan.video_elements(video), self.geometry.fetch_patch_size())
        )
        videos = [(clip.frames, clip_metadata(clip.frames.shape[0], clip.sample_fps))]
        head, _, tail = zoom_prompt(truth.question, truth.options, style=self.options.zoom.prompt).partition(
            VIDEO_PLACEHOLDER
        )
        content = [{"type": "text", "text": head}] if head else []
        content += [{"type": "video"}, {"type": "text", "text": tail}]
        prompt_ids = await self.ct_build_initial_tokens([{"role": "user", "content": content}], videos=videos)
        generated = await self.server_manager.generate(
            request_id=f"zoom-{uuid.uuid4().hex}",
            prompt_ids=prompt_ids,
            sampling_params={**GREEDY, "max_tokens": self.options.zoom.max_new_tokens},
            video_data=videos,
        )
        answer = self.tokenizer.decode(generated.token_ids, skip_special_tokens=True)
        out.update({ZOOM_ANSWER: answer_letter(answer), "zoom_frames": plan.frames, "zoom_fps": clip.sample_fps})
        return out
