"""The VideoZoomer rollout: ``n`` multi-turn ``<video_zoom>`` trajectories per prompt inside EasyR1's GRPO trainer.

Runs in each rollout worker on its share of the prompts (a :class:`~..hookspecs.Rollout`; the host routes the
trainer's generation here when ``reward_function_kwargs.agent`` is set). The protocol is the agent's own
(:mod:`zoomzero_plugin.agent`: one environment for evaluation, SFT export and this rollout):

1. The first prompt: the authors' system prompt and the question, its ``<video>`` replaced by the labelled
   overview frames (images, as frame references). The question is ``question_text(question, options)`` of the
   row's answer JSON — the text agent evaluation and the SFT export show — or, for a row whose answer holds no
   question (a bare letter), the row's own prompt as EasyR1 rendered it.
2. Turns, stopping at ``</video_zoom>`` (the first: each prompt with ``n`` samples; after that ``n = 1`` per
   trajectory); each turn goes through :meth:`~zoomzero_plugin.agent.Trajectory.step`; a call's clip (or an error
   text) becomes an observation turn appended after an ``<|im_end|>``, exactly as :mod:`zoomzero_plugin.agent.render`
   writes it (the clip's frames as images, or with ``clip_as: video`` one video: :mod:`.clip_videos`), its frames
   decoded in the decode threads. When (``agent.schedule``): ``continuous`` (the default, where
   EasyR1's engine is vLLM's) sends a trajectory's next turn to the engine as soon as its observation is ready, while
   other turns are still generating (:func:`~zoomzero_plugin.engine.schedule.continuous` over the worker's
   request-level stream); ``rounds`` makes ONE engine call per round over all active trajectories. The same
   trajectories either way (greedy decoding: the same tokens; the same seeds per request).
3. Budgets: each turn may generate ``min(max_new_tokens, what is left of max_response_tokens)``; an observation that
   would not fit ``max_response_tokens`` (with room for one more token) is not appended and the trajectory ends
   there (``total_tokens``), so a response is cut at a turn boundary, never inside an image.
4. :func:`~..multiturn.assemble` lays the trajectories out for EasyR1 (observations in the sequence, masked out of
   the loss; every sample its own media; M-RoPE over the whole sequence).

Per-sample statistics travel in ``non_tensor_batch["agent_stats"]``; :func:`metrics` logs them under ``agent/``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from zoomzero_plugin.agent import Trajectory, get_prompts, question_text
from zoomzero_plugin.agent.frames import FrameReader
from zoomzero_plugin.agent.protocol import STOP
from zoomzero_plugin.agent.render import IM_END, QWEN_IMAGE, first_prompt, observation_block, observation_text
from zoomzero_plugin.engine.schedule import continuous
from zoomzero_plugin.ground_truth import GroundTruth, truth_letter
from zoomzero_plugin.question import VIDEO_PLACEHOLDER
from zoomzero_plugin.token_masks import decode_rows
from zoomzero_plugin.vision import merged_grid

from ...options import AgentOptions
from .. import frame_refs
from ..conversation import Conversation, Piece, SegmentEncoder
from ..generation import row_fields
from ..hookspecs import Rollout
from ..multiturn import Layout, assemble
from .clip_videos import ClipVideos
from .options import recipe_options

NAME = "videozoomer"
STATS_KEY = "agent_stats"  # non_tensor_batch: one dict per sample (see RolloutSample.stats)
_USER_HEAD, _VIDEO = "<|im_start|>user\n", "<|vision_start|><|video_pad|><|vision_end|>"


def user_text(truth: Any, fallback: Callable[[], str]) -> str:
    """The first user turn's text: the ground truth's question and options when it has them (see the module
    docstring), else ``fallback()`` (the row's own prompt). ValueError when the ground truth is unreadable."""
    if truth is not None and not (isinstance(truth, str) and truth_letter(truth) is not None):  # "B", "B.", "(B)"
        parsed = GroundTruth.parse(truth)
        if parsed.question.strip():
            return question_text(parsed.question, parsed.options)
    return fallback()


def question_of(prompt_text: str) -> str:
    """The row's user turn from EasyR1's rendered prompt, its video placeholder back as ``<video>``.

    EasyR1's dataset renders the row's prompt with the chat template (``<|im_start|>user\\n…<|im_end|>``) and a
    video as Qwen's vision markers; the agent replaces the system prompt and shows the video as labelled frames.
    """
    head = prompt_text.rfind(_USER_HEAD)
    end = prompt_text.find(IM_END, head + len(_USER_HEAD)) if head >= 0 else -1
    if end < 0:
        raise ValueError("the prompt has no '<|im_start|>user' turn (the agent rollout needs chat-template prompts)")
    user = prompt_text[head + len(_USER_HEAD) : end]
    if user.count(_VIDEO) != 1:
        raise ValueError(
            f"the row's prompt shows {user.count(_VIDEO)} videos; the agent rollout needs exactly one "
            "'<video>' placeholder"
        )
    return user.replace(_VIDEO, VIDEO_PLACEHOLDER)


@contextmanager
def collections_paused():
    """Python's cyclic garbage collector off for a block (back as it was after). The bookkeeping of a step creates
    ~10⁶ objects (turns, frames, references) and no cycles: collections triggered by that many allocations
    rescan the step's live objects again and again (~1 s of a 128 × 16 step); reference counting frees the rest."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class RolloutSample:
    """One trajectory: its environment, its token streams and what happened to it."""

    trajectory: Trajectory
    conversation: Conversation
    video: str
    grid: tuple[int, int]  # every frame of the video: same size, same tokens
    truncated: bool = False  # the response reached max_response_tokens
    size: tuple[int, int] = (0, 0)  # (width, height) of every frame read

    @property
    def active(self) -> bool:
        return not self.trajectory.done

    def stats(self) -> dict[str, Any]:
        t = self.trajectory
        sampled = sum(len(p.ids) for p in self.conversation.response if p.sampled)
        return {
            "turns": len(t.steps),
            "calls": t.calls,
            "errors": t.errors,
            "clip_frames": t.clip_frames,
            "images": len(self.conversation.images()),
            "videos": len(self.conversation.videos()),
            "end": t.end,
            "truncated": self.truncated,
            "sampled_tokens": sampled,
            "observation_tokens": self.conversation.response_tokens - sampled,
        }


def frame_cache(megabytes: int) -> frame_refs.FrameCache:
    """This process's cache of decoded frame groups, handed to the host's ``process_image`` seam (which decodes the
    rollout's frame references there and in the actor); made again only when its size changes."""
    cache = frame_refs.installed()
    if cache is None or cache.open_video is not FrameReader or cache.max_bytes != megabytes << 20:
        cache = frame_refs.install(frame_refs.FrameCache(FrameReader, max_bytes=megabytes << 20))
    return cache


class AgentRollout:
    """The worker-side state of one ``generate_sequences`` call (a batch of prompts)."""

    def __init__(self, worker: Any, options: AgentOptions):
        self.worker, self.options, self.budget = worker, options, options.budget
        self.prompts = get_prompts(options.prompt)
        self.tokenizer, self.processor = worker.tokenizer, worker.processor
        if self.processor is None or not hasattr(self.processor, "image_processor"):
            raise ValueError("the VideoZoomer rollout needs a vision-language model (a Qwen-VL processor)")
        image_token = getattr(self.processor, "image_token", "<|image_pad|>")
        self.layout = Layout(
            self.tokenizer.convert_tokens_to_ids(image_token),
            self.tokenizer.pad_token_id,
            worker.prompt_length,
            worker.response_length,
        )
        self.total = min(self.budget.max_response_tokens, worker.response_length)
        self.eos = {self.tokenizer.eos_token_id}
        self.encode = SegmentEncoder(self.tokenizer)
        self.cache = frame_cache(options.frame_cache_mb)
        self.clip_videos = (
            None
            if options.clip_as != "video"
            else ClipVideos(self.processor, self.budget.max_frame_pixels, self.budget.min_frame_pixels)
        )

    # -- building blocks --------------------------------------------------------------------------------

    def refs(self, video: str, frames: Sequence[int]) -> list[dict[str, Any]]:
        b = self.budget
        return frame_refs.frame_refs(video, frames, b.max_frame_pixels, b.min_frame_pixels)

    def start(self, prompt_ids: Sequence[int], media: Mapping[str, Any], n: int) -> list[RolloutSample]:
        """``n`` fresh trajectories of one row (same first prompt and overview)."""
        videos = list((media or {}).get("videos") or [])
        if len(videos) != 1 or not isinstance(videos[0], str):
            raise ValueError(f"the VideoZoomer rollout needs one video file per row, got {videos!r}")
        video = videos[0]
        info = self.cache.reader(video).info
        truth = row_fields(media).get("ground_truth")
        question = user_text(
            truth, lambda: question_of(self.tokenizer.decode(list(prompt_ids), skip_special_tokens=False))
        )
        trajectories = [Trajectory(info, self.budget, self.prompts) for _ in range(n)]
        overview = [f.frame for f in trajectories[0].overview]
        refs = self.refs(video, overview)
        first = self.cache.image(refs[0])
        grid = merged_grid(self.processor.image_processor, first.width, first.height)
        text = first_prompt(
            self.tokenizer.apply_chat_template, self.prompts.system, trajectories[0].user_parts(question), QWEN_IMAGE
        )
        piece = Piece(self.encode([text])[0], sampled=False, images=refs, grids=[grid] * len(overview))
        return [RolloutSample(t, Conversation(piece), video, grid, size=first.size) for t in trajectories]

    def limit(self, sample: RolloutSample) -> int:
        """Tokens the sample's next turn may generate."""
        return min(self.budget.max_new_tokens, self.total - sample.conversation.response_tokens)

    def advance(self, samples: Sequence[RolloutSample], completions: Sequence[Any]) -> None:
        """Read one round: append each sample's sampled turn, step its environment, and append the observation
        when it fits (turns decoded and observations encoded in one batch each).

        A turn the total budget stopped (it ran to what was left of ``max_response_tokens`` without ending) is ``cut``:
        it ends the trajectory (an answer it holds counts, a call is not run), as in agent evaluation."""
        turns = []
        for sample, c in zip(samples, completions):
            left = self.total - sample.conversation.response_tokens
            limit = min(self.budget.max_new_tokens, left)
            ended = bool(c.token_ids) and c.token_ids[-1] in self.eos
            turns.append((left, limit, ended, (c.token_ids[:-1] if ended else c.token_ids)[:limit]))
        texts = decode_rows(self.tokenizer, [body for *_, body in turns], skip_special_tokens=False)
        observed = []
        for sample, c, (left, limit, ended, _), text in zip(samples, completions, turns, texts):
            tokens = c.token_ids
            stopped = len(tokens) > limit or (len(tokens) == limit and not ended and not text.endswith(STOP))
            cut = stopped and left <= self.budget.max_new_tokens
            logprobs = c.logprobs[:limit] if c.logprobs is not None else None
            sample.conversation.append(Piece(list(tokens[:limit]), sampled=True, logprobs=logprobs))
            sample.truncated = cut
            step = sample.trajectory.step(text, cut=cut)
            if step.observation is not None:
                observed.append((sample, step.observation))
        ids = self.encode([IM_END + observation_block(observation_text(o, self.options.clip_as)) for _, o in observed])
        for (sample, observation), obs_ids in zip(observed, ids):
            piece = self.observation_piece(sample, observation, obs_ids)
            if sample.conversation.response_tokens + piece.tokens + 1 > self.total:  # no room: end at this turn
                sample.truncated = True
                sample.trajectory.withhold()
            else:
                sample.conversation.append(piece)

    def observation_piece(self, sample: RolloutSample, observation: Any, ids: list[int]) -> Piece:
        """The observation's tokens with its clip: images (frame references), or one video (``clip_as: video``)."""
        frames = observation.frames
        if self.clip_videos is not None and frames:
            ref, layout = self.clip_videos.clip(sample.trajectory.video, frames, sample.size)
            return Piece(ids, sampled=False, videos=[ref], layouts=[layout])
        return Piece(
            ids,
            sampled=False,
            images=self.refs(sample.video, [f.frame for f in frames]) if frames else [],
            grids=[sample.grid] * len(frames),
        )

    # -- the rollout ---------------------------------------------------------------------------------------

    def sampling(self, meta_info: Mapping[str, Any], n: int, max_tokens: int) -> dict[str, Any]:
        meta = {k: v for k, v in meta_info.items() if not k.startswith("easyr1_")}
        meta.update(n=n, max_tokens=max_tokens, stop=[STOP], include_stop_str_in_output=True, detokenize=True)
        if self.options.sampling_logprobs:
            meta["logprobs"] = 0  # the sampled token's own log-prob
        return meta

    def run(self, prompts: Any) -> Any:
        from verl.protocol import DataProto

        meta_info = prompts.meta_info
        eos = meta_info.get("eos_token_id", self.tokenizer.eos_token_id)
        self.eos = {int(i) for i in (eos if isinstance(eos, (list, tuple)) else [eos]) if i is not None}
        n = int(meta_info.get("n", self.worker.default_n()))
        raw = prompts.non_tensor_batch["raw_prompt_ids"]
        media = prompts.non_tensor_batch.get("multi_modal_data")
        if media is None:
            raise ValueError(
                "the VideoZoomer rollout needs video rows: this batch has no multi_modal_data (data.video_key)"
            )
        with collections_paused():
            groups = [self.start(ids, m, n) for ids, m in zip(raw, media)]
        samples = [s for g in groups for s in g]  # EasyR1's order: prompt i's samples at i·n … i·n + n − 1
        stream = None
        if self.options.schedule == "continuous" and hasattr(self.worker, "stream"):
            stream = self.worker.stream(self.sampling(meta_info, 1, self.budget.max_new_tokens))
        if stream is None:
            self.rounds(groups, samples, meta_info, n)
        else:
            self.continuous(stream, groups, samples)
        with collections_paused():
            built = assemble([s.conversation for s in samples], self.layout, self.options.sampling_logprobs)
            stats = np.empty(len(samples), dtype=object)
            stats[:] = [s.stats() for s in samples]
        return DataProto.from_dict(
            tensors=built["tensors"], non_tensors={**built["non_tensors"], STATS_KEY: stats}, meta_info=dict(meta_info)
        )

    def rounds(
        self,
        groups: Sequence[Sequence[RolloutSample]],
        samples: Sequence[RolloutSample],
        meta_info: Mapping[str, Any],
        n: int,
    ) -> None:
        """One engine call per round over every trajectory still going; a round's clips decode in parallel."""
        first = [g[0] for g in groups]
        round_max = max(self.limit(s) for s in first)
        outputs = self.worker.round(
            [s.conversation.raw_ids() for s in first],
            [s.conversation.media() for s in first],
            self.sampling(meta_info, n, round_max),
            first_seeds(groups),
        )
        self.read_round(samples, [c for completions in outputs for c in completions])
        while going := [k for k, s in enumerate(samples) if s.active]:
            active = [samples[k] for k in going]
            outputs = self.worker.round(
                [s.conversation.raw_ids() for s in active],
                [s.conversation.media() for s in active],
                self.sampling(meta_info, 1, max(self.limit(s) for s in active)),
                [turn_seed(samples, k) for k in going],
            )
            self.read_round(active, [completions[0] for completions in outputs])

    def read_round(self, samples: Sequence[RolloutSample], completions: Sequence[Any]) -> None:
        for task in self.read(samples, completions).values():
            if task is not None:
                task.result()

    def read(self, samples: Sequence[RolloutSample], completions: Sequence[Any]) -> dict[int, Future | None]:
        """:meth:`advance`, then the decoding of each new observation's frames, started: per sample still going
        (by position in ``samples``), the Future of its frames' decoding, or None when its observation shows none."""
        shown = [len(s.conversation.images()) for s in samples]
        with collections_paused():
            self.advance(samples, completions)
        going: dict[int, Future | None] = {}
        for k, (sample, before) in enumerate(zip(samples, shown)):
            if sample.active:
                new = sample.conversation.images()[before:]
                going[k] = self.cache.prefetch(new) if new else None
        return going

    def continuous(
        self, stream: Any, groups: Sequence[Sequence[RolloutSample]], samples: Sequence[RolloutSample]
    ) -> None:
        """Every trajectory's turns through the worker's request-level stream, without a round barrier: the first
        turn of each prompt (``n`` samples) at once, then each trajectory's next turn as soon as its frames are
        decoded (:func:`~zoomzero_plugin.engine.schedule.continuous`)."""
        start = 0
        first = []
        for group in groups:  # a prompt's samples are one request sampled n times, as in a round's engine call
            keys = list(range(start, start + len(group)))
            start += len(group)
            head = group[0].conversation
            first.append((keys, head.raw_ids(), head.media(), self.limit(group[0])))

        def submit(jobs: list[int]) -> None:
            stream.submit(
                [
                    ([k], samples[k].conversation.raw_ids(), samples[k].conversation.media(), self.limit(samples[k]))
                    for k in jobs
                ],
                [turn_seed(samples, k) for k in jobs],
            )

        def advance(finished: Sequence[tuple[int, Any]]) -> dict[int, Future | None]:
            going = self.read([samples[k] for k, _ in finished], [c for _, c in finished])
            return {finished[j][0]: task for j, task in going.items()}

        try:
            stream.submit(first, first_seeds(groups))
            continuous(stream, [], submit, advance)
        finally:
            stream.close()


def first_seeds(groups: Sequence[Sequence[RolloutSample]]) -> list[int]:
    """How far past the generation's seed each prompt's first turns are seeded: prompt ``i``'s at its first sample's
    place in the batch, so vLLM's ``+ k`` makes first turn ``k`` of the batch ``+ k`` (:func:`turn_seed` at round 0).
    With the generation's one seed for every prompt, two prompts alike (the same question over frames that look the
    same) would draw the same ``n`` first turns: one group's worth of samples, counted as several."""
    heads, start = [], 0
    for group in groups:
        heads.append(start)
        start += len(group)
    return heads


def turn_seed(samples: Sequence[RolloutSample], k: int) -> int:
    """How far past the generation's seed trajectory ``k``'s next turn is seeded: each turn after the first of each
    trajectory its own (the first turns: prompt ``i``'s ``n`` samples, seeded :func:`first_seeds` ``+ 0 … n - 1``
    by vLLM)."""
    return len(samples) * samples[k].trajectory.round + k


def generate(worker: Any, prompts: Any, options: Mapping[str, Any]) -> Any:
    """:class:`~..hookspecs.Rollout` ``generate``: the VideoZoomer trajectories of a worker's prompts."""
    return AgentRollout(worker, AgentOptions.from_section(options)).run(prompts)


def select(config: Any) -> dict[str, Any] | None:
    """:class:`~..hookspecs.Rollout` ``options``: the agent section, as read, when the recipe enables it
    (:class:`ConfigError` listing the problems when the recipe's sections cannot be read)."""
    options = recipe_options(config).checked()
    return options.agent.to_section() if options.agent_rollout else None


def metrics(batch: Any, reward_metrics: Mapping[str, Sequence[Any]]) -> dict[str, float]:
    """``agent/*`` metrics of a generated batch: calls, frames, errors, turns, truncations, accuracy by calls."""
    stats = batch.non_tensor_batch.get(STATS_KEY)
    if stats is None or len(stats) == 0:
        return {}
    calls = np.array([s["calls"] for s in stats])
    means = ("errors", "turns", "clip_frames", "images", "truncated", "sampled_tokens", "observation_tokens")
    out = {
        "agent/calls": float(calls.mean()),
        **{f"agent/{k}": float(np.mean([s[k] for s in stats])) for k in means},
        "agent/answered": float(np.mean([s["end"] == "answer" for s in stats])),
    }
    accuracy = reward_metrics.get("accuracy")
    if accuracy is not None and len(accuracy) == len(stats):
        accuracy = np.asarray(accuracy, dtype=float)
        for k in range(int(calls.max()) + 1):
            if (calls == k).any():
                out[f"agent/accuracy_calls_{k}"] = float(accuracy[calls == k].mean())
    return out


ROLLOUT = Rollout(
    name=NAME,
    options=select,
    generate=generate,
    metrics=metrics,
    row_fields=("ground_truth",),
    summary="VideoZoomer: n multi-turn <video_zoom> trajectories per prompt (overview, <= 4 clips, <= 5 turns), "
    "each turn to the engine as soon as its observation is ready (agent.schedule: continuous | rounds); observations "
    "in the sequence, out of the loss; M-RoPE over the whole sequence",
)
