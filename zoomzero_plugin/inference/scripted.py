"""A real backend with scripted words: for tests, benchmarks and what-if runs of the modes.

:class:`ScriptedBackend` runs the wrapped backend in full (frames decoded, processor, model forward and
generation, timings) and then replaces the text of the requests its script answers. Planning, decoding
and the cost of every later pass stay real; only what the model *said* is chosen. A random model never
writes a valid span, so this is how the zoom passes get exercised (and timed) without a trained model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..gvqa.glue_masks import GlueTokenMasker
from ..spans import Span
from .backend import Backend, Generation, Output, Request, SamplingParams, open_stream

# script(request, sample index) -> text, (text, confidence of the answer letter), or None (keep the model's)
Script = Callable[[Request, int], "str | tuple[str, float] | None"]


def template(letter: str, spans: Sequence[Span], think: str = "I see it.") -> str:
    """A response in the Zoom-Zero template answering ``letter`` and grounding ``spans``."""
    glue = ", ".join(f"({s:g}, {e:g})" for s, e in spans)
    return f"<think>{think}</think><answer>{letter}</answer><glue>[{glue}]</glue>"


class ScriptedBackend:
    """``generate`` of ``inner``, then ``script`` picks the text. A scripted confidence becomes the
    log-probability of the token carrying the answer letter (0 for every other token).
    Every (request, generation) pair is kept in ``calls``."""

    name = "scripted"

    def __init__(self, inner: Backend, script: Script):
        self.inner, self.script = inner, script
        self.processor = getattr(inner, "processor", None)
        self.geometry = inner.geometry
        self.tokenizer = inner.tokenizer
        self._masker = GlueTokenMasker(self.tokenizer, skip_special_tokens=True)
        self.calls: list[tuple[Request, Generation]] = []

    def generate(self, requests: Sequence[Request], params: SamplingParams) -> list[Generation]:
        gens = self.inner.generate(requests, params)
        for request, gen in zip(requests, gens):
            self._say(request, gen)
        return gens

    def _say(self, request: Request, gen: Generation) -> None:
        for k in range(len(gen.outputs)):
            scripted = self.script(request, k)
            if scripted is not None:
                text, confidence = scripted if isinstance(scripted, tuple) else (scripted, 1.0)
                gen.outputs[k] = self._output(text, confidence)
        self.calls.append((request, gen))

    def stream(self, params: SamplingParams) -> ScriptedStream | None:
        """The inner backend's stream with the script's words (None where the inner backend has no stream)."""
        inner = open_stream(self.inner, params)
        return None if inner is None else ScriptedStream(self, inner)

    def _output(self, text: str, confidence: float) -> Output:
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        offsets = self._masker.char_offsets(ids, text).tolist()
        pos = text.find("<answer>") + len("<answer>") if "<answer>" in text else 0
        logprobs = [math.log(confidence) if offsets[i] <= pos < offsets[i + 1] else 0.0 for i in range(len(ids))]
        return Output(text=text, token_ids=ids, token_logprobs=logprobs, token_offsets=offsets)


class ScriptedStream:
    """A backend stream whose generations get the script's words as they come back."""

    def __init__(self, backend: ScriptedBackend, inner: Any):
        self.backend, self.inner = backend, inner
        self._requests: dict[Any, Request] = {}

    @property
    def pending(self) -> int:
        return self.inner.pending

    def submit(self, items: Sequence[tuple[Any, Request]]) -> None:
        self._requests.update(items)
        self.inner.submit(items)

    def step(self) -> list[tuple[Any, Generation]]:
        done = self.inner.step()
        for key, gen in done:
            self.backend._say(self._requests.pop(key), gen)
        return done

    def close(self) -> None:
        self.inner.close()
