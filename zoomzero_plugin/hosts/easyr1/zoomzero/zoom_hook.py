"""The zoom-in rollout hook (Zoom-Zero §4.1–4.2).

After the coarse generation of a batch: parse every response's ``<glue>`` spans, plan the zoom pass with Eq. 3 over
them, and run ONE extra ``generate_sequences`` for all responses that have a plan — the zoom prompt (question and
options from the row's ground truth; the paper's words by default), ``n=1``, greedy, ``max_new_tokens`` tokens, the
pass's own pixel/fps limits, a clip spec per row so workers decode only the predicted spans, padded to the worker count,
fresh uids. Responses whose requests are identical (same video, plan and question: the n samples of a prompt often cite
the same spans) share one generated row; the pass is greedy, so sharing changes no answer. The answers' letters (a bare
letter or ``<answer>B</answer>``) become the ``zoom_answer`` reward input; rows without valid spans get ``None`` (zoom
reward 0) or, with ``no_spans: uniform``, a uniform pass over the video.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from zoomzero_plugin.answers import answer_letter
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.parsing import glue_spans
from zoomzero_plugin.gvqa.prompts import zoom_prompt
from zoomzero_plugin.gvqa.zoom import ZoomPlan, plan_pass, plan_zoom
from zoomzero_plugin.question import VIDEO_PLACEHOLDER
from zoomzero_plugin.token_masks import decode_rows, encode_rows
from zoomzero_plugin.vision import VisionGeometry, fetch_patch_size

from ...options import ZoomOptions
from ..clips import is_clip_spec, make_clip_spec
from ..reward_extras import add_reward_extras

_MARKER = "\x00zoom prompt\x00"


@dataclass
class ZoomRequests:
    """The driver-side plan of one zoom pass over a batch of ``n`` responses."""

    truths: list[GroundTruth]
    videos: list[str]
    span_seconds: list[float]  # union length of each response's valid glue spans (0: none)
    rows: list[int] = field(default_factory=list)  # responses that get a zoom pass
    plans: list[ZoomPlan] = field(default_factory=list)
    request_of: list[int] = field(default_factory=list)  # per planned row: its request (index into distinct)
    distinct: list[int] = field(default_factory=list)  # per request: the position in rows of its first row


def plan_clip_spec(plan: ZoomPlan, video: str) -> dict[str, Any]:
    """The host's clip spec of ``plan``'s clips over ``video`` (decoded on the plan's token grid)."""
    return make_clip_spec(str(video), plan.video_elements(str(video)), fetch_patch_size(plan.budget.factor))


def first_video(multi_modal_data: Any) -> str:
    videos = (multi_modal_data or {}).get("videos") or []
    if len(videos) != 1 or is_clip_spec(videos[0]):
        raise ValueError(f"the zoom pass needs exactly one video file per prompt, got {videos!r}")
    return str(videos[0])


@lru_cache(maxsize=4096)
def coarse_frames(duration: float, fps: float) -> int:
    """Frames EasyR1's coarse pass samples from ``duration`` seconds at ``data.video_fps`` (qwen-vl-utils rule)."""
    from qwen_vl_utils.vision_process import smart_nframes

    native = 1000.0  # only the clamp to the file's own frame count needs it; any high rate leaves it inactive
    return int(smart_nframes({"fps": fps}, total_frames=max(4, int(duration * native)), video_fps=native))


class ZoomHook:
    """Rollout hook ``zoom``; one instance per trainer (it caches tokenised zoom prompts)."""

    name = "zoom"

    def __init__(
        self, options: ZoomOptions, tokenizer: Any, processor: Any, coarse_fps: float, skip_special_tokens: bool = True
    ):
        if processor is None:
            raise ValueError("the zoom pass needs a vision-language model: the tokenizer has no processor")
        self.options, self.tokenizer, self.processor = options, tokenizer, processor
        self.geometry = VisionGeometry.of(processor)
        self.budget = options.on(self.geometry)
        self.coarse_fps = coarse_fps
        self.skip_special_tokens = skip_special_tokens
        self.video_token_id = tokenizer.convert_tokens_to_ids(getattr(processor, "video_token", "<|video_pad|>"))
        self._prompt_ids: dict[tuple[str, tuple[str, ...]], list[int]] = {}

    # -- driver-side bookkeeping -------------------------------------------------------------------

    def decode(self, ids: torch.Tensor, mask: torch.Tensor) -> list[str]:
        """Each row's generated tokens as EasyR1's reward manager decodes them (``tokenizer.decode``)."""
        lengths = mask.sum(-1).tolist()
        table = ids.numpy(force=True)  # one row at a time to lists: only the tokens each row keeps
        rows = [table[i, : int(n)].tolist() for i, n in enumerate(lengths)]
        return decode_rows(self.tokenizer, rows, self.skip_special_tokens)

    def plan(self, texts: Sequence[str], ground_truths: Sequence[Any], multi_modal_data: Sequence[Any]) -> ZoomRequests:
        """Parse the responses and plan the zoom pass of each (Eq. 3 over its merged valid glue spans)."""
        parsed: dict[str, GroundTruth] = {}  # the n responses to a prompt share one ground-truth string
        truths = []
        for g in ground_truths:
            key = g if isinstance(g, str) else repr(g)
            if key not in parsed:
                parsed[key] = GroundTruth.parse(g)
            truths.append(parsed[key])
        videos = [first_video(m) for m in multi_modal_data]
        requests = ZoomRequests(truths=truths, videos=videos, span_seconds=[])
        # per (spans, duration): seconds, plan and the plan's number among the distinct plans (equal plans, equal
        # numbers), so that a plan is made and hashed once per distinct span set, not once per response
        planned: dict[tuple, tuple[float, ZoomPlan | None, int]] = {}
        plan_number: dict[ZoomPlan, int] = {}
        sent: dict[tuple, int] = {}  # (video, plan number, question, options) -> request index
        for i, (text, truth) in enumerate(zip(texts, truths)):
            spans = glue_spans(text, truth.duration)  # = parse_response(…).spans, as the reward sees them
            key = (spans, truth.duration)
            if key not in planned:
                plan = plan_zoom(spans, truth.duration, self.budget)
                if plan is None and self.options.no_spans == "uniform":
                    budget = self.options.uniform_budget(truth.duration, self.geometry)
                    plan = plan_pass([(0.0, truth.duration)], truth.duration, budget)
                number = -1 if plan is None else plan_number.setdefault(plan, len(plan_number))
                planned[key] = (sum(e - s for s, e in spans), plan, number)  # glue spans come merged
            seconds, plan, number = planned[key]
            requests.span_seconds.append(seconds)
            if plan is not None:
                key = (videos[i], number, truth.question, truth.options)
                if key not in sent:
                    sent[key] = len(requests.distinct)
                    requests.distinct.append(len(requests.rows))
                requests.request_of.append(sent[key])
                requests.rows.append(i)
                requests.plans.append(plan)
        return requests

    def prompt_ids(self, truths: Sequence[GroundTruth]) -> list[list[int]]:
        """Token ids of the zoom prompt of each question, through the processor's chat template (cached)."""
        keys = [(t.question, t.options) for t in truths]
        missing = {k: t for k, t in zip(keys, truths) if k not in self._prompt_ids}
        if missing:
            for truth in missing.values():
                if not truth.question.strip():
                    raise ValueError(
                        f"question {truth.qid}: the ground truth has no 'question' for the zoom pass to re-ask"
                    )
            texts = self._chat(
                [zoom_prompt(t.question, t.options, style=self.options.prompt) for t in missing.values()]
            )
            ids = encode_rows(self.tokenizer, texts)
            self._prompt_ids.update(zip(missing, ids))
        return [self._prompt_ids[k] for k in keys]

    def _render(self, prompt: str) -> str:
        content = []
        for i, text in enumerate(prompt.split(VIDEO_PLACEHOLDER)):
            if i:
                content.append({"type": "video"})
            if text:
                content.append({"type": "text", "text": text})
        return self.processor.apply_chat_template(
            [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
        )

    def _chat(self, prompts: list[str]) -> list[str]:
        """The chat template applied to each ``<video>…`` prompt. Rendered once around a marker and filled in,
        when the template copies the text verbatim (checked against a full rendering of the first prompt)."""
        tails = [p.removeprefix(VIDEO_PLACEHOLDER) for p in prompts]
        simple = all(p.startswith(VIDEO_PLACEHOLDER) and VIDEO_PLACEHOLDER not in t for p, t in zip(prompts, tails))
        shell = self._render(VIDEO_PLACEHOLDER + _MARKER)
        if simple and shell.count(_MARKER) == 1 and shell.replace(_MARKER, tails[0]) == self._render(prompts[0]):
            return [shell.replace(_MARKER, t) for t in tails]
        return [self._render(p) for p in prompts]

    def zoom_batch(self, requests: ZoomRequests) -> Any:
        """The ``DataProto`` of the zoom pass: one row per distinct request, left-padded prompts.

        ``raw_prompt_ids`` and the clip specs are what vLLM reads; the padded tensors only shape the output.
        Every row gets a fresh uid (EasyR1's actor caches vision inputs by uid).
        """
        from verl.protocol import DataProto

        rows = [requests.rows[j] for j in requests.distinct]
        plans = [requests.plans[j] for j in requests.distinct]
        ids = self.prompt_ids([requests.truths[r] for r in rows])
        k, width = len(ids), max(len(x) for x in ids)
        padded = np.full((k, width), self.tokenizer.pad_token_id, dtype=np.int64)
        for j, x in enumerate(ids):
            padded[j, width - len(x) :] = x
        input_ids = torch.from_numpy(padded)
        lengths = torch.tensor([len(x) for x in ids])
        attention_mask = (torch.arange(width)[None, :] >= width - lengths[:, None]).long()
        position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        raw_prompt_ids, multi_modal_data, uids = (np.empty(k, dtype=object) for _ in range(3))
        run = uuid.uuid4().hex
        for j, (row, plan, x) in enumerate(zip(rows, plans, ids)):
            raw_prompt_ids[j] = x
            multi_modal_data[j] = {"videos": [plan_clip_spec(plan, requests.videos[row])]}
            uids[j] = f"zoom-{run}-{j}"
        meta_info = {
            "min_pixels": self.budget.min_frame_pixels,
            "max_pixels": self.budget.max_frame_pixels,
            "video_fps": self.budget.fps,
            "n": 1,
            "temperature": 0.0,
            "max_tokens": self.options.max_new_tokens,
        }
        return DataProto.from_dict(
            tensors={"input_ids": input_ids, "attention_mask": attention_mask, "position_ids": position_ids},
            non_tensors={"raw_prompt_ids": raw_prompt_ids, "multi_modal_data": multi_modal_data, "uid": uids},
            meta_info=meta_info,
        )

    def answers(self, requests: ZoomRequests, output: Any, n: int) -> list[str | None]:
        """The zoom pass's answer letter per response (None: no pass, or no letter in its output).

        The output may be a bare letter or ``<answer>B</answer>`` (:func:`~zoomzero_plugin.answers.answer_letter`).
        """
        letters: list[str | None] = [None] * n
        texts = self.decode(output.batch["responses"], output.batch["response_mask"]) if requests.rows else []
        for row, k in zip(requests.rows, requests.request_of):
            letters[row] = answer_letter(texts[k])
        return letters

    # -- the hook ----------------------------------------------------------------------------------

    def __call__(self, trainer: Any, batch: Any, mode: str) -> dict[str, float]:
        from verl.protocol import pad_dataproto_to_divisor, unpad_dataproto

        if "multi_modal_data" not in batch.non_tensor_batch:
            raise ValueError("the zoom pass needs video rows: this batch has no multi_modal_data (data.video_key)")
        texts = self.decode(batch.batch["responses"], batch.batch["response_mask"])
        requests = self.plan(texts, batch.non_tensor_batch["ground_truth"], batch.non_tensor_batch["multi_modal_data"])
        output = None
        if requests.rows:
            worker_group = trainer.actor_rollout_ref_wg
            padded, pad_size = pad_dataproto_to_divisor(self.zoom_batch(requests), worker_group.world_size)
            output = unpad_dataproto(worker_group.generate_sequences(padded), pad_size=pad_size)
        answers = self.answers(requests, output, len(batch))
        add_reward_extras(batch, zoom_answer=answers)
        return self.stats(requests, answers, batch.batch["prompts"])

    def stats(self, requests: ZoomRequests, answers: Sequence[str | None], prompts: torch.Tensor) -> dict[str, float]:
        """``zoom/*`` metrics of one pass (means; a metric over no responses is left out)."""
        n = len(answers)
        with_spans = [s for s in requests.span_seconds if s > 0]
        coverage = [s / t.duration for s, t in zip(requests.span_seconds, requests.truths) if s > 0]
        coarse_tokens = (prompts == self.video_token_id).sum(-1).tolist()
        coarse = [coarse_frames(t.duration, self.coarse_fps) for t in requests.truths]
        out = {
            "zoom/valid_span_share": len(with_spans) / n,
            "zoom/zoomed_share": len(requests.rows) / n,
            "zoom/coarse_frames": float(np.mean(coarse)),
            "zoom/coarse_tokens_per_frame": float(np.mean([k / f for k, f in zip(coarse_tokens, coarse)])),
        }
        if with_spans:
            out["zoom/span_seconds"] = float(np.mean(with_spans))
            out["zoom/span_coverage"] = float(np.mean(coverage))
        if requests.rows:
            correct = [answers[r] is not None and answers[r] == requests.truths[r].answer for r in requests.rows]
            out["zoom/zoom_frames"] = float(np.mean([p.frames for p in requests.plans]))
            out["zoom/zoom_tokens_per_frame"] = float(np.mean([p.tokens_per_frame for p in requests.plans]))
            out["zoom/answered"] = float(np.mean([answers[r] is not None for r in requests.rows]))
            out["zoom/requests"] = float(len(requests.distinct))  # generated rows (identical requests shared)
            out["zoom/accuracy"] = float(np.mean(correct))
        return out
