"""Fixtures for inference and evaluation: the real transformers backend on the tiny model, a synthetic
benchmark, and a scripted wrapper that puts chosen words in the real model's mouth.

``ScriptedBackend`` runs the real backend (frames decoded, processor, model forward and generation) and
then replaces the text of the requests its script answers, so a test controls which spans a pass
predicts and with what confidence; everything downstream (parsing, planning, decoding the zoom pass)
is real. The random tiny model alone never writes a valid span.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from zoomzero_plugin.inference.backend import Generation, Output, Request, SamplingParams
from zoomzero_plugin.zoom import ZoomBudget

SMALL = ZoomBudget(max_tokens=64, min_frame_pixels=4 * 28 * 28, fps=1.0, max_frames=256)

Script = Callable[[Request, int], "str | tuple[str, float] | None"]


class ScriptedBackend:
    """Real generation, scripted text: ``script(request, sample) -> text | (text, confidence) | None``.

    The confidence becomes the log-probability of the token that carries the answer letter (0 elsewhere).
    Every (request, generation) pair is kept in ``calls``.
    """

    name = "scripted"

    def __init__(self, inner, script: Script):
        self.inner, self.script = inner, script
        self.factor = inner.factor
        self.calls: list[tuple[Request, Generation]] = []

    def generate(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]:
        gens = self.inner.generate(requests, params)
        for request, gen in zip(requests, gens):
            for k, output in enumerate(gen.outputs):
                scripted = self.script(request, k)
                if scripted is not None:
                    gen.outputs[k] = self._output(*(scripted if isinstance(scripted, tuple) else (scripted, 1.0)))
            self.calls.append((request, gen))
        return gens

    def _output(self, text: str, confidence: float) -> Output:
        tok = self.inner.tokenizer
        ids = tok.encode(text, add_special_tokens=False)
        offsets = self.inner._masker.char_offsets(ids, text).tolist()
        pos = text.find("<answer>") + len("<answer>") if "<answer>" in text else 0
        logprobs = [math.log(confidence) if offsets[i] <= pos < offsets[i + 1] else 0.0 for i in range(len(ids))]
        return Output(text=text, token_ids=ids, token_logprobs=logprobs, token_offsets=offsets)


def grounded(letter: str, spans: Sequence[tuple[float, float]]) -> str:
    glue = ", ".join(f"({s}, {e})" for s, e in spans)
    return f"<think>I see it.</think><answer>{letter}</answer><glue>[{glue}]</glue>"


@pytest.fixture(scope="session")
def tiny_backend(tiny_model_dir):
    from zoomzero_plugin.inference.hf_backend import TransformersBackend

    return TransformersBackend(str(tiny_model_dir), device="cpu", batch_size=4)


@pytest.fixture(scope="session")
def bench_rows(tmp_path_factory):
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    return make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=4, seed=3)
