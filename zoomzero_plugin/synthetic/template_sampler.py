"""Sampling template-shaped responses from a (tiny, random) Qwen-VL, for the demo.

A random model never writes the response template by itself, so the demo constrains it: the template's
fixed text is forced, and at each choice point (a second, an option letter) the model's own probabilities
over the allowed continuations decide. Every number and letter in a response is thus the model's sample.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from ..video import DecodedClip


@dataclass
class VideoContext:
    """Processor outputs for one prompt with its videos: the prefix every continuation is scored after."""

    inputs: dict[str, torch.Tensor]

    @property
    def length(self) -> int:
        return int(self.inputs["input_ids"].shape[1])


class TinyVideoLM:
    """A Qwen2.5-VL model and processor, scoring continuations of a video prompt."""

    def __init__(self, model, processor):
        self.model, self.processor = model, processor
        self.tokenizer = processor.tokenizer

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
        inputs = self.processor(
            text=[prompt],
            videos=[c.frames for c in clips] or None,
            videos_kwargs={"do_resize": False, "fps": [c.sample_fps for c in clips]} if clips else {},
            return_tensors="pt",
        )
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
        extra = {}
        if "pixel_values_videos" in ctx.inputs:
            extra = {
                "pixel_values_videos": ctx.inputs["pixel_values_videos"].repeat(k, 1),
                "video_grid_thw": ctx.inputs["video_grid_thw"].repeat(k, 1),
                "second_per_grid_ts": ctx.inputs["second_per_grid_ts"].repeat(k),
            }
        logp = self.model(input_ids=ids, attention_mask=attn, **extra).logits.log_softmax(-1)
        out = torch.zeros(k)
        for i, cand in enumerate(candidates):
            positions = torch.arange(len(base) - 1, len(base) - 1 + len(cand))
            out[i] = logp[i, positions, torch.tensor(cand)].sum()
        return out

    def choose(self, ctx: VideoContext, prefix: list[int], options: list[str], rng: random.Random,
               temperature: float = 1.0) -> str:
        """Sample one of ``options`` with probability ∝ p_model(option)^(1/temperature); 0 → argmax."""
        scores = self.continuation_logprobs(ctx, prefix, [self.encode(o) for o in options])
        if temperature <= 0:
            return options[int(scores.argmax())]
        probs = torch.softmax(scores / temperature, 0).tolist()
        return rng.choices(options, weights=probs)[0]


def sample_grounded_response(lm: TinyVideoLM, ctx: VideoContext, duration: float, letters: str,
                             rng: random.Random, temperature: float = 1.0) -> tuple[str, list[int]]:
    """One response in the Zoom-Zero template; returns (text, generated token ids)."""
    seconds = [str(s) for s in range(int(duration) + 1)]
    ids: list[int] = []
    text = ""

    def force(piece: str) -> None:
        nonlocal text
        ids.extend(lm.encode(piece))
        text += piece

    def choose(options: list[str]) -> str:
        value = lm.choose(ctx, ids, options, rng, temperature)
        force(value)
        return value

    force("<think>The square shows up around <time>(")
    start = choose(seconds[:-1])
    force(", ")
    end = choose(seconds)
    force(")</time>.</think><answer>")
    choose(list(letters))
    force(f"</answer><glue>[({start}, {end})]</glue>")
    return text, ids + [lm.tokenizer.convert_tokens_to_ids("<|im_end|>")]
