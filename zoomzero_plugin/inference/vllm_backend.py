"""The vLLM backend (needs vLLM installed; imported only when chosen).

Thin on purpose: frames are decoded by the same qwen-vl-utils path as the transformers backend and handed to
vLLM as ``(frames, metadata)``, the prompt is built by the same processor chat template. A clip's sample rate
sets its temporal M-RoPE positions: transformers < 5 take it only as an ``fps`` processor kwarg (one per clip),
transformers >= 5 (vLLM >= 0.19) from the clip's metadata. Tested on vLLM 0.11.0's CPU engine against the
transformers backend (tests/vllm); checked by hand on vLLM 0.32.0 with transformers 5.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Sequence
from typing import Any

from ..cpu_compat import ensure_torchvision_importable
from ..engine.cpu_platform import CPU_ENGINE_DEFAULTS, on_cpu
from ..engine.stream import EngineStream
from ..gvqa.glue_masks import GlueTokenMasker
from ..video_store import decode_pool
from ..vision import VisionGeometry
from .backend import (
    Generation,
    Output,
    Request,
    SamplingParams,
    chat_messages,
    decode_videos,
    takes_fps_kwarg,
)


def release_llm(owner: Any, attr: str) -> None:
    """Take the ``vllm.LLM`` at ``owner.attr`` away from ``owner``, shut its engine down and collect what it held
    (when the engine runs in this process — V1 without multiprocessing, as on a CPU here and in EasyR1's rollout —
    its weights and KV cache). Nothing there (already released): nothing to do."""
    llm = owner.__dict__.pop(attr, None)
    if llm is not None:
        llm.llm_engine.engine_core.shutdown()
        del llm
        gc.collect()


class VLLMBackend:
    """``vllm.LLM`` behind :class:`~zoomzero_plugin.inference.backend.Backend`.

    Args:
        model: checkpoint path or hub id. ``max_videos``: clips per prompt vLLM must accept (fine passes
        over several spans send one video per span); ``max_images``: images per prompt (the agent's frames:
        overview + clips, 128 by default in VideoZoomer). ``device`` is ignored (vLLM places the model itself).
        Remaining keyword arguments go to ``vllm.LLM`` (e.g. ``tensor_parallel_size``, ``max_model_len``).
    """

    name = "vllm"

    def __init__(
        self,
        model: str,
        batch_size: int = 64,
        max_videos: int = 16,
        max_images: int = 0,
        device: str | None = None,
        dtype: str = "auto",
        **llm_kwargs: Any,
    ):
        ensure_torchvision_importable()
        import vllm
        from transformers import AutoProcessor

        self._vllm = vllm
        self.processor = AutoProcessor.from_pretrained(model, use_fast=True)
        self.tokenizer = self.processor.tokenizer
        self._masker = GlueTokenMasker(self.tokenizer, skip_special_tokens=True)
        self.geometry = VisionGeometry.of(self.processor)
        self.fps_kwarg = takes_fps_kwarg()
        self.batch_size = max(1, int(batch_size))
        llm_kwargs.setdefault("limit_mm_per_prompt", {"video": max_videos, "image": max_images})
        # vLLM's processor cache sends the HF processor only the clips it has not seen, with the prompt's
        # per-clip kwargs unchanged: per-clip rates then no longer line up with the clips. No cache.
        llm_kwargs.setdefault("mm_processor_cache_gb", 0)
        if on_cpu():
            llm_kwargs = {**CPU_ENGINE_DEFAULTS, **llm_kwargs}
        self.llm = vllm.LLM(model=model, dtype=dtype, **llm_kwargs)
        names = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>")
        vocab = self.tokenizer.get_vocab()
        self._bias = {vocab[n]: -100.0 for n in names if n in vocab}
        self._image_pad = vocab.get("<|image_pad|>")
        self._video_pad = vocab.get("<|video_pad|>")

    def _inputs(self, request: Request) -> tuple[dict[str, Any], Generation]:
        if request.formatted:  # the agent's prompt: text as is, images (frames) resized by vLLM's HF processor
            item: dict[str, Any] = {"prompt": request.prompt}
            if request.images or request.clip_videos:
                item["multi_modal_data"] = {"image": list(request.images)} if request.images else {}
            if request.clip_videos:  # each clip one video, timed by its own frames (as the transformers backend)
                item["multi_modal_data"]["video"] = [(v.tensor(), v.metadata()) for v in request.clip_videos]
                item["mm_processor_kwargs"] = {"do_sample_frames": False}
                if self.fps_kwarg:
                    item["mm_processor_kwargs"]["fps"] = [v.timing.sample_fps for v in request.clip_videos]
            elif request.frames:  # one video of PIL frames, timed at the processor's default rate
                item["multi_modal_data"] = {"video": [list(request.frames)]}
            return item, Generation(outputs=[], timing={"decode_s": 0.0})
        clips, stats, seconds = decode_videos(request, self.geometry)
        text = self.processor.apply_chat_template(chat_messages(request), tokenize=False, add_generation_prompt=True)
        item = {"prompt": text}
        if clips:
            item["multi_modal_data"] = {"video": [(c.frames, c.metadata) for c in clips]}
            item["mm_processor_kwargs"] = {"do_resize": False, "do_sample_frames": False}
            if self.fps_kwarg:
                item["mm_processor_kwargs"]["fps"] = [c.sample_fps for c in clips]
        g = self.geometry
        tokens = sum(-(-c.frames // g.temporal_patch) * (c.height // g.factor) * (c.width // g.factor) for c in stats)
        return item, Generation(outputs=[], clips=stats, video_tokens=int(tokens), timing={"decode_s": seconds})

    def _params(self, request: Request, params: SamplingParams) -> Any:
        if request.choices:
            # greedy among the letters; vLLM reports raw (full-vocabulary) log-probs of its top 20 tokens and
            # of the sampled one: the chosen letter is always read, another letter outside the top 20 reads -inf
            ids = [self.tokenizer.encode(c, add_special_tokens=False)[0] for c in request.choices]
            return self._vllm.SamplingParams(
                max_tokens=1, temperature=0.0, allowed_token_ids=ids, logprobs=20, seed=params.seed
            )
        return self._vllm.SamplingParams(
            max_tokens=params.max_new_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            n=params.n,
            seed=params.seed,
            logprobs=0 if params.logprobs else None,
            logit_bias=self._bias or None,
            stop=list(params.stop) or None,
            include_stop_str_in_output=bool(params.stop),
        )

    def generate(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]:
        out: list[Generation] = []
        for i in range(0, len(requests), self.batch_size):
            chunk = list(requests[i : i + self.batch_size])
            items, gens = zip(*decode_pool().map(self._inputs, chunk))  # clips of the chunk decode in parallel
            start = time.perf_counter()
            results = self.llm.generate(list(items), [self._params(r, params) for r in chunk], use_tqdm=False)
            share = (time.perf_counter() - start) / len(chunk)
            for request, gen, result in zip(chunk, gens, results):
                self._read(request, gen, result, share)
            out += gens
        return out

    def _read(self, request: Request, gen: Generation, result: Any, generate_s: float) -> None:
        """Fill ``gen`` from vLLM's ``RequestOutput`` for ``request``."""
        gen.prompt_tokens = len(result.prompt_token_ids or [])
        if request.formatted:
            gen.image_tokens = sum(1 for t in result.prompt_token_ids or [] if t == self._image_pad)
            gen.video_tokens = sum(1 for t in result.prompt_token_ids or [] if t == self._video_pad)
        gen.timing.update(prepare_s=0.0, generate_s=generate_s)
        gen.outputs = [self._output(request, o) for o in result.outputs]

    def stream(self, params: SamplingParams) -> VLLMStream:
        """Requests in as they are ready, generations out as they end (continuous batching on this engine)."""
        return VLLMStream(self, params)

    def shutdown(self) -> None:
        """Shut the engine down and let go of it (its weights and KV cache: ~1.5 GB each for the tests' tiny model
        on a CPU, where the engine runs in this process); the backend cannot generate afterwards. A second call
        does nothing."""
        release_llm(self, "llm")

    def _output(self, request: Request, completion: Any) -> Output:
        ids = list(completion.token_ids)
        steps = completion.logprobs or []
        logprobs = (
            [float(step[t].logprob) if t in step else -math.inf for t, step in zip(ids, steps)] if steps else None
        )
        choice_logprobs = None
        if request.choices and steps:
            by_text = {self.tokenizer.decode([t]): float(lp.logprob) for t, lp in steps[0].items()}
            choice_logprobs = {c: by_text.get(c, -math.inf) for c in request.choices}
        offsets = self._masker.char_offsets(ids, completion.text).tolist() if logprobs is not None else None
        return Output(
            text=completion.text,
            token_ids=ids,
            token_logprobs=logprobs,
            token_offsets=offsets,
            choice_logprobs=choice_logprobs,
        )


class VLLMStream:
    """:class:`~zoomzero_plugin.engine.stream.EngineStream` over a :class:`VLLMBackend`: requests built as
    ``generate`` builds them, each with ``params`` (``n`` must be 1); :meth:`step` returns ``(key, Generation)`` of the
    requests it finished, their ``generate_s`` their share of the engine steps they were in flight for."""

    def __init__(self, backend: VLLMBackend, params: SamplingParams):
        if params.n != 1:
            raise ValueError(f"a stream samples once per request, got n={params.n}")
        self.backend, self.params = backend, params
        self.engine = EngineStream(backend.llm)
        self._waiting: dict[Any, tuple[Request, Generation]] = {}

    @property
    def pending(self) -> int:
        return self.engine.pending

    def submit(self, items: Sequence[tuple[Any, Request]]) -> None:
        for (key, request), (item, gen) in zip(items, decode_pool().map(self.backend._inputs, [r for _, r in items])):
            self._waiting[key] = (request, gen)
            self.engine.add([key], item, self.backend._params(request, self.params))

    def step(self) -> list[tuple[Any, Generation]]:
        done = []
        for key, _, result, seconds in self.engine.step():
            request, gen = self._waiting.pop(key)
            self.backend._read(request, gen, result, seconds)
            done.append((key, gen))
        return done

    def close(self) -> None:
        self.engine.close()
        self._waiting.clear()
