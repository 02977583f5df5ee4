"""Sampling template-shaped responses from a (tiny, random) Qwen-VL, for the demos.

A random model never writes the response template by itself, so the demos constrain it: the template's
fixed text is forced, and at each choice point (a second, an option letter, a frame rate) the model's own
probabilities over the allowed continuations decide. Every number and letter in a response is thus the
model's sample. :class:`TemplateAgentBackend` does this for the agent's turns behind the inference
``Backend`` interface, so ``zoomzero demo --agent`` runs the real agent loop.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from ..inference.backend import Generation, Output, clip_kwargs
from ..video import DecodedClip
from ..vision import VisionGeometry


@dataclass
class VideoContext:
    """Processor outputs for one prompt with its videos: the prefix every continuation is scored after."""

    inputs: dict[str, torch.Tensor]

    @property
    def length(self) -> int:
        return int(self.inputs["input_ids"].shape[1])


class TinyVideoLM:
    """A Qwen-VL model and its processor, scoring continuations of a video prompt."""

    def __init__(self, model, processor):
        self.model, self.processor = model, processor
        self.tokenizer = processor.tokenizer

    @classmethod
    def load(cls, model_dir) -> TinyVideoLM:
        """The model and processor saved in ``model_dir`` (any Qwen-VL family)."""
        from transformers import AutoModelForImageTextToText, AutoProcessor

        processor = AutoProcessor.from_pretrained(model_dir, use_fast=True)
        return cls(AutoModelForImageTextToText.from_pretrained(model_dir).eval(), processor)

    def context(self, text: str, clips: list[DecodedClip]) -> VideoContext:
        """Chat-format ``text`` (one ``<video>`` per clip) with the clips' already resized frames."""
        parts = text.split("<video>")
        content = [{"type": "text", "text": parts[0]}] if parts[0] else []
        for part in parts[1:]:
            content.append({"type": "video"})
            if part:
                content.append({"type": "text", "text": part})
        prompt = self.processor.apply_chat_template(
            [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
        )
        inputs = self.processor(text=[prompt], return_tensors="pt", **(clip_kwargs(clips) if clips else {}))
        return VideoContext(dict(inputs))

    def prompt_context(self, prompt: str, images: list) -> VideoContext:
        """A formatted prompt (chat template applied, one image placeholder per image) with its images."""
        inputs = self.processor(text=[prompt], images=images or None, return_tensors="pt")
        return VideoContext(dict(inputs))

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False).input_ids

    @torch.no_grad()
    def continuation_logprobs(self, ctx: VideoContext, prefix: list[int], candidates: list[list[int]]) -> torch.Tensor:
        """(k,) summed log-probability of each candidate token sequence after ``ctx`` + ``prefix``."""
        k = len(candidates)
        width = max(len(c) for c in candidates)
        pad = self.tokenizer.pad_token_id
        base = ctx.inputs["input_ids"][0].tolist() + prefix
        ids = torch.tensor([base + c + [pad] * (width - len(c)) for c in candidates])
        attn = torch.tensor([[1] * (len(base) + len(c)) + [0] * (width - len(c)) for c in candidates])
        # the vision inputs (pixels, grids, a video's seconds per temporal patch) once per candidate row
        extra = {
            key: value.repeat(k, *([1] * (value.dim() - 1)))
            for key, value in ctx.inputs.items()
            if key not in ("input_ids", "attention_mask") and torch.is_tensor(value)
        }
        logp = self.model(input_ids=ids, attention_mask=attn, **extra).logits.log_softmax(-1)
        out = torch.zeros(k)
        for i, cand in enumerate(candidates):
            positions = torch.arange(len(base) - 1, len(base) - 1 + len(cand))
            out[i] = logp[i, positions, torch.tensor(cand)].sum()
        return out

    def choose(
        self, ctx: VideoContext, prefix: list[int], options: list[str], rng: random.Random, temperature: float = 1.0
    ) -> str:
        """Sample one of ``options`` with probability ∝ p_model(option)^(1/temperature); 0 → argmax."""
        scores = self.continuation_logprobs(ctx, prefix, [self.encode(o) for o in options])
        if temperature <= 0:
            return options[int(scores.argmax())]
        probs = torch.softmax(scores / temperature, 0).tolist()
        return rng.choices(options, weights=probs)[0]


class Writer:
    """A response written piece by piece: :meth:`force` appends fixed text, :meth:`choose` appends the option the
    model samples after what is written so far. ``text`` and ``ids`` (its token ids) grow together."""

    def __init__(self, lm: TinyVideoLM, ctx: VideoContext, rng: random.Random, temperature: float = 1.0):
        self.lm, self.ctx, self.rng, self.temperature = lm, ctx, rng, temperature
        self.text = ""
        self.ids: list[int] = []

    def force(self, piece: str) -> None:
        self.ids.extend(self.lm.encode(piece))
        self.text += piece

    def choose(self, options: list[str]) -> str:
        value = self.lm.choose(self.ctx, self.ids, options, self.rng, self.temperature)
        self.force(value)
        return value


def sample_grounded_response(
    lm: TinyVideoLM, ctx: VideoContext, duration: float, letters: str, rng: random.Random, temperature: float = 1.0
) -> tuple[str, list[int]]:
    """One response in the Zoom-Zero template; returns (text, generated token ids)."""
    seconds = [str(s) for s in range(int(duration) + 1)]
    w = Writer(lm, ctx, rng, temperature)
    w.force("<think>The square shows up around <time>(")
    start = w.choose(seconds[:-1])
    w.force(", ")
    end = w.choose(seconds)
    w.force(")</time>.</think><answer>")
    w.choose(list(letters))
    w.force(f"</answer><glue>[({start}, {end})]</glue>")
    return w.text, w.ids + [lm.tokenizer.convert_tokens_to_ids("<|im_end|>")]


# Agent turns the template backend can write; the model picks every number and the letter.
WIDE_CALL, CALL, ANSWER = "wide_call", "call", "answer"


class TemplateAgentBackend:
    """The inference ``Backend`` interface over :class:`TinyVideoLM`, writing agent turns from templates.

    ``plan[r]`` is the kind of turn every trajectory writes in round ``r`` (read from the request's
    ``qid#round`` tag): ``wide_call`` asks for a segment the model places at 8 fps over 3–6 s (more than 16
    frames: an error turn), ``call`` for 1–3 s at 2 or 4 fps, ``answer`` for an option letter among
    ``letters``. Segment starts are multiples of ``step`` seconds below ``duration``.
    """

    name = "template"

    def __init__(
        self,
        lm: TinyVideoLM,
        plan,
        duration: float,
        letters: str,
        rng: random.Random,
        step: float = 5.0,
        temperature: float = 1.0,
    ):
        self.lm, self.plan, self.rng, self.temperature = lm, list(plan), rng, temperature
        self.tokenizer, self.processor = lm.tokenizer, lm.processor
        self.geometry = VisionGeometry.of(lm.processor)
        self.letters = list(letters)
        self.starts = [f"{x:g}" for x in _frange(0.0, max(duration - 6.0, 0.0), step)]

    def generate(self, requests, params):
        out = []
        for request in requests:
            ctx = self.lm.prompt_context(request.prompt, list(request.images))
            round_ = int(request.tag.rsplit("#", 1)[1]) if "#" in request.tag else 0
            kind = self.plan[min(round_, len(self.plan) - 1)]
            text, ids = self._turn(ctx, kind)
            merge = self.geometry.merge_size**2
            grid = ctx.inputs.get("image_grid_thw")
            out.append(
                Generation(
                    outputs=[Output(text=text, token_ids=ids)],
                    prompt_tokens=ctx.length,
                    image_tokens=int(grid.prod(-1).sum()) // merge if grid is not None else 0,
                )
            )
        return out

    def _turn(self, ctx: VideoContext, kind: str) -> tuple[str, list[int]]:
        w = Writer(self.lm, ctx, self.rng, self.temperature)
        if kind == ANSWER:
            w.force("<think>The frames show the square clearly.</think><answer>")
            w.choose(self.letters)
            w.force("</answer>")
            return w.text, w.ids
        w.force('<think>The square is hard to see in the overview; a closer look.</think><video_zoom>{"segment": [')
        start = float(w.choose(self.starts))
        w.force(", ")
        lengths = ["3", "4", "5", "6"] if kind == WIDE_CALL else ["1", "2", "3"]
        w.choose([f"{start + float(x):g}" for x in lengths])
        w.force('], "fps": ')
        if kind == WIDE_CALL:
            w.force("8")
        else:
            w.choose(["2", "4"])
        w.force("}</video_zoom>")
        return w.text, w.ids


def _frange(lo: float, hi: float, step: float) -> list[float]:
    out, x = [], lo
    while x <= hi + 1e-9:
        out.append(x)
        x += step
    return out
