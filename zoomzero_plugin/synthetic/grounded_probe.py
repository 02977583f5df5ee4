"""What a warm-started Zoom-Zero model does before RL: how often its coarse-pass response is in the template the
format reward pays, and how often it runs on to the token limit instead of ending. Measured with transformers on the
prompts and videos as the rollout shows them (:class:`~.warm_start.VideoInput`).

The coarse pass is paid only for ``<think>…</think><answer>L</answer><glue>[(s, e)]</glue>`` and nothing after it
(:attr:`~zoomzero_plugin.gvqa.parsing.ParsedResponse.format_ok`); a response that never ends is cut at the recipe's
``data.max_response_length`` and scores 0. A warm start whose greedy answers never end gives RL groups of zeros to
learn from: in the Zoom-Zero miniature one seed in six did (by hand, 29 Nov 2026). :func:`probe_grounded` measures
it in seconds, before any run:

- ``greedy``: one greedy response per row; the share in the template, and how many ran to ``max_new_tokens``
  without the end-of-turn token;
- ``sampled``: ``samples`` responses per row at temperature 1 (as RL samples them); the same two counts.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ground_truth import GroundTruth
from ..gvqa.parsing import parse_response
from .sft import generate_responses, prompt_inputs
from .warm_start import Example, VideoInput, _chat, _Clips


@dataclass
class GroundedProbe:
    """Counts of :func:`probe_grounded`: responses generated greedily and sampled, how many are in the template the
    format reward pays, and how many ran to the token limit."""

    greedy: int = 0
    greedy_in_template: int = 0
    greedy_unended: int = 0
    sampled: int = 0
    sampled_in_template: int = 0
    sampled_unended: int = 0

    def count(self, kind: str, in_template: bool, ended: bool) -> None:
        """One ``kind`` (``greedy`` or ``sampled``) response more."""
        setattr(self, kind, getattr(self, kind) + 1)
        setattr(self, f"{kind}_in_template", getattr(self, f"{kind}_in_template") + in_template)
        setattr(self, f"{kind}_unended", getattr(self, f"{kind}_unended") + (not ended))

    def shares(self) -> dict[str, float | None]:
        """The shares in the template, greedy and sampled (None where nothing was generated)."""
        return {
            "greedy_in_template": self.greedy_in_template / self.greedy if self.greedy else None,
            "sampled_in_template": self.sampled_in_template / self.sampled if self.sampled else None,
        }

    def lines(self) -> list[str]:
        share = lambda a, b: f"{a}/{b} = {a / b:.0%}" if b else "–"  # noqa: E731
        return [
            f"coarse answer in the template ({how}): {share(ok, n)}; ran to the token limit {unended}"
            for how, n, ok, unended in (
                ("greedy", self.greedy, self.greedy_in_template, self.greedy_unended),
                ("temperature 1", self.sampled, self.sampled_in_template, self.sampled_unended),
            )
        ]


def probe_grounded(
    model_dir: str | Path,
    rows: Sequence[Mapping[str, Any]],
    shown: VideoInput,
    max_new_tokens: int,
    samples: int = 4,
    seed: int = 0,
) -> GroundedProbe:
    """Probe the Zoom-Zero model in ``model_dir`` on dataset ``rows`` (their own prompts), each video shown as
    ``shown`` says: one greedy and ``samples`` sampled coarse-pass responses per row, each at most
    ``max_new_tokens`` long (the recipe's ``data.max_response_length``). See the module docstring."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32).eval()
    clips = _Clips(shown)
    probe = GroundedProbe()
    rng = random.Random(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: threads only wait on each other
    try:
        for row in rows:
            duration = GroundTruth.parse(row["answer"]).duration
            frames, fps, metadata = clips.coarse(row["videos"][0])
            example = Example(
                _chat(processor.tokenizer.apply_chat_template, row["prompt"], True),
                "",
                videos=(frames,),
                video_fps=(fps,),
                video_metadata=(metadata,),
            )
            inputs = prompt_inputs(processor, example)
            if "second_per_grid_ts" in inputs:
                inputs["second_per_grid_ts"] = torch.tensor(inputs["second_per_grid_ts"])
            for kind, n in (("greedy", 1), ("sampled", samples)):
                seed, greedy = rng.randrange(1 << 30), kind == "greedy"
                for text, ended in generate_responses(model, processor, inputs, n, greedy, seed, max_new_tokens):
                    probe.count(kind, parse_response(text, duration).format_ok, ended)
    finally:
        torch.set_num_threads(threads)
    return probe
