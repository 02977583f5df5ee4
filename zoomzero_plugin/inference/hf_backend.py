"""The transformers backend: a Qwen-VL model and its processor, batched, on CPU or GPU.

Frames are decoded and resized by qwen-vl-utils (the zoom plan fixes their number and size), so the
processor gets ``do_resize=False``, the sampling fps of every clip (``second_per_grid_ts`` comes from it)
and the decoder's metadata. Random or under-trained weights emit vision placeholder tokens; those are
suppressed in generation. Log-probabilities are read from the model's logits before temperature or
top-p, renormalised without the suppressed tokens, one step at a time (no (steps, batch, vocab) copy).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch

from ..cpu_compat import ensure_torchvision_importable
from ..gvqa.glue_masks import GlueTokenMasker
from ..vision import VisionGeometry
from .backend import (
    Generation,
    Output,
    Request,
    SamplingParams,
    chat_messages,
    clip_kwargs,
    cut_at_stop,
    decode_videos,
    frame_video_kwargs,
)

_VISION_TOKENS = ("image_token", "video_token", "vision_start_token", "vision_end_token")
_VISION_NAMES = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>")


class _StepLogProbs:
    """A logits processor that records log p(chosen token) at every step.

    At step t it sees the token chosen at step t-1 (the last column of ``input_ids``) and reads its
    log-probability from the distribution it kept from step t-1; only one (rows, vocab) tensor is held.
    """

    def __init__(self) -> None:
        self.previous: torch.Tensor | None = None
        self.steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.previous is not None:
            self.steps.append(self.previous.gather(1, input_ids[:, -1:]).squeeze(1))
        self.previous = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def finish(self, sequences: torch.LongTensor) -> torch.Tensor:
        """(rows, generated) log-probs, given the final (rows, prompt + generated) sequences."""
        if self.previous is not None:
            self.steps.append(self.previous.gather(1, sequences[:, -1:]).squeeze(1))
            self.previous = None
        return torch.stack(self.steps, dim=1).cpu() if self.steps else torch.zeros(sequences.shape[0], 0)


def _tokens(grid: Any, merge_size: int) -> list[int]:
    """Context tokens of each video/image of a processor batch (its grid_thw rows)."""
    return (grid.prod(-1) // merge_size**2).tolist() if grid is not None else []


class TransformersBackend:
    """``generate`` over micro-batches of ``batch_size`` requests.

    Args:
        model: a local path or hub id of a Qwen2-VL / Qwen2.5-VL / Qwen3-VL checkpoint with its processor.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``…; default: CUDA when available.
        dtype: ``"auto"`` (bf16 on GPU, fp32 on CPU), ``"bfloat16"``, ``"float16"``, ``"float32"``.
        attn_implementation: passed to ``from_pretrained`` (e.g. ``"flash_attention_2"``, ``"sdpa"``).
        model_obj, processor: an already loaded model / processor to use instead of loading ``model``.
    """

    name = "transformers"

    def __init__(
        self,
        model: str,
        device: str | None = None,
        dtype: str = "auto",
        batch_size: int = 1,
        attn_implementation: str | None = None,
        model_obj: Any = None,
        processor: Any = None,
    ):
        ensure_torchvision_importable()
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if dtype == "auto":
            dtype = "bfloat16" if self.device.type == "cuda" else "float32"
        self.processor = processor or AutoProcessor.from_pretrained(
            model, use_fast=True
        )  # 4.57 picks it anyway, with a warning
        self.processor.tokenizer.padding_side = "left"
        import transformers

        # ``dtype`` replaced ``torch_dtype`` in transformers 4.56; older versions ignore an unknown ``dtype``
        key = "dtype" if tuple(int(x) for x in transformers.__version__.split(".")[:2]) >= (4, 56) else "torch_dtype"
        kwargs: dict[str, Any] = {key: getattr(torch, dtype)}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        self.model = (model_obj or AutoModelForImageTextToText.from_pretrained(model, **kwargs)).to(self.device).eval()
        self.batch_size = max(1, int(batch_size))
        self.tokenizer = self.processor.tokenizer
        self.geometry = VisionGeometry.of(self.processor)
        self._masker = GlueTokenMasker(self.tokenizer, skip_special_tokens=True)
        self._suppress = self._vision_token_ids()
        config = self.model.generation_config
        self._eos = config.eos_token_id if config.eos_token_id is not None else self.tokenizer.eos_token_id
        self._pad = config.pad_token_id if config.pad_token_id is not None else self.tokenizer.pad_token_id

    def _vision_token_ids(self) -> list[int]:
        names = {getattr(self.processor, attr, None) for attr in _VISION_TOKENS} | set(_VISION_NAMES)
        vocab = self.tokenizer.get_vocab()
        return sorted(vocab[n] for n in names if n and n in vocab)

    def choice_token_ids(self, choices: Sequence[str]) -> list[int]:
        """The single token of every choice; raises if one is not a single token."""
        ids = []
        for choice in choices:
            tokens = self.tokenizer.encode(choice, add_special_tokens=False)
            if len(tokens) != 1:
                raise ValueError(f"choice {choice!r} is {len(tokens)} tokens for this tokenizer; need exactly 1")
            ids.append(tokens[0])
        return ids

    def generate(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]:
        out: list[Generation] = []
        for i in range(0, len(requests), self.batch_size):
            out += self._batch(list(requests[i : i + self.batch_size]), params)
        return out

    def prepare(self, requests: list[Request]) -> tuple[Any, list[Generation]]:
        """Decode and tokenize a batch: the processor's tensors (on the device) and generations holding
        the clip stats, token counts and timings so far."""
        decoded, gens = [], []
        for request in requests:
            clips, stats, seconds = decode_videos(request, self.geometry)
            decoded.append(clips)
            gens.append(Generation(outputs=[], clips=stats, timing={"decode_s": seconds}))
        start = time.perf_counter()
        texts = [
            r.prompt
            if r.formatted
            else self.processor.apply_chat_template(chat_messages(r), tokenize=False, add_generation_prompt=True)
            for r in requests
        ]
        flat = [clip for clips in decoded for clip in clips]
        images = [image for r in requests for image in r.images]
        clip_videos = [v for r in requests for v in r.clip_videos]
        frames = [list(r.frames) for r in requests if r.frames]
        if sum(map(bool, (flat, images or clip_videos, frames))) > 1:
            raise ValueError("a batch holds requests with videos, with images or with frames, only one kind")
        kwargs: dict[str, Any] = {}
        if flat:
            kwargs = clip_kwargs(flat)
        elif images or clip_videos:  # images resized by the processor's own rule, as the VideoZoomer authors' was
            kwargs = {"images": images or None, **(frame_video_kwargs(clip_videos) if clip_videos else {})}
        elif frames:  # one video each, resized and timed by the processor's defaults (VideoZoomer's no-tool run)
            kwargs = {"videos": frames}
        inputs = self.processor(text=texts, padding=True, return_tensors="pt", **kwargs)
        prepare = (time.perf_counter() - start) / len(requests)
        video = _tokens(inputs.get("video_grid_thw"), self.geometry.merge_size)
        image = _tokens(inputs.get("image_grid_thw"), self.geometry.merge_size)
        k = j = 0
        for gen, request, clips, mask in zip(gens, requests, decoded, inputs["attention_mask"]):
            videos = len(clips) + bool(request.frames) + len(request.clip_videos)
            gen.video_tokens = int(sum(video[k : k + videos]))
            gen.image_tokens = int(sum(image[j : j + len(request.images)]))
            gen.prompt_tokens = int(mask.sum())
            gen.timing["prepare_s"] = prepare
            k += videos
            j += len(request.images)
        return inputs.to(self.device), gens

    @torch.inference_mode()
    def _batch(self, requests: list[Request], params: SamplingParams) -> list[Generation]:
        kinds = {bool(r.choices) for r in requests}
        if len(kinds) > 1:
            return [g for r in requests for g in self._batch([r], params)]
        inputs, gens = self.prepare(requests)
        start = time.perf_counter()
        if requests[0].choices:
            self._score_choices(requests, inputs, gens)
        else:
            self._sample(inputs, gens, params)
        share = (time.perf_counter() - start) / len(requests)
        for gen in gens:
            gen.timing["generate_s"] = share
        return gens

    def _score_choices(self, requests: list[Request], inputs: Any, gens: list[Generation]) -> None:
        logits = self.model(**inputs).logits[:, -1, :].float()
        logits[:, self._suppress] = float("-inf")
        logprobs = torch.log_softmax(logits, dim=-1).cpu()
        for row, request, gen in zip(logprobs, requests, gens):
            ids = self.choice_token_ids(request.choices)
            scores = {c: float(row[i]) for c, i in zip(request.choices, ids)}
            best = max(request.choices, key=lambda c: scores[c])
            gen.outputs = [
                Output(
                    text=best,
                    token_ids=[ids[request.choices.index(best)]],
                    token_logprobs=[scores[best]],
                    token_offsets=[0, len(best)],
                    choice_logprobs=scores,
                )
            ]

    def _sample(self, inputs: Any, gens: list[Generation], params: SamplingParams) -> None:
        from transformers import GenerationConfig, LogitsProcessorList

        sampling = params.temperature > 0
        config = GenerationConfig(
            max_new_tokens=params.max_new_tokens,
            do_sample=sampling,
            temperature=params.temperature if sampling else None,
            top_p=params.top_p if sampling else None,
            top_k=0 if sampling else None,
            num_return_sequences=params.n,
            eos_token_id=self._eos,
            pad_token_id=self._pad,
            suppress_tokens=self._suppress or None,
            return_dict_in_generate=True,
            stop_strings=list(params.stop) or None,
        )
        recorder = _StepLogProbs() if params.logprobs else None
        if sampling:
            torch.manual_seed(params.seed)
        out = self.model.generate(
            **inputs,
            generation_config=config,
            tokenizer=self.tokenizer,
            logits_processor=LogitsProcessorList([recorder] if recorder else []),
        )
        prompt_len = inputs["input_ids"].shape[1]
        generated = out.sequences[:, prompt_len:].cpu()
        logprobs = recorder.finish(out.sequences) if recorder else None
        # a row that stopped early (EOS, or a stop string) is padded while the others go on
        done = set(self._eos if isinstance(self._eos, list) else [self._eos]) | ({self._pad} if params.stop else set())
        for row, ids in enumerate(generated.tolist()):
            end = next((i for i, t in enumerate(ids) if t in done), len(ids))
            ids = ids[:end]
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            offsets = self._masker.char_offsets(ids, text) if params.logprobs or params.stop else None
            cut = cut_at_stop(text, params.stop)
            if len(cut) < len(text):  # the token completing a stop string may carry more characters
                end = next((k for k in range(1, len(ids) + 1) if offsets[k] >= len(cut)), len(ids))
                ids, text, offsets = ids[:end], cut, offsets[: end + 1]
            gens[row // params.n].outputs.append(
                Output(
                    text=text,
                    token_ids=ids,
                    token_logprobs=logprobs[row, :end].tolist() if logprobs is not None else None,
                    token_offsets=offsets.tolist() if params.logprobs else None,
                )
            )
