"""Continuous batching on a vLLM ``LLM``: requests go in as they are ready, completions come out as they end.

``LLM.generate`` runs a batch to its end, so every request of a call waits for the slowest. :class:`EngineStream`
drives the same engine one step at a time through vLLM's request-level API (``llm.llm_engine.add_request`` and
``step``, what ``LLM.generate`` itself calls): a request added between two steps joins the running batch at the next
step, and a finished one is handed back at the step it ends.

Every sample is its own request: a prompt with ``n`` samples is added once, vLLM fans it out into its ``n`` child
requests as ``LLM.generate`` would (multimodal inputs processed once; sample ``k`` seeded ``seed + k``), and each child
is detached from the parent so that it comes back when *it* ends, not when the last of its siblings does. Where the
engine's internals differ (another vLLM), each sample is added as a request of its own instead, seeded ``seed + k``.

:class:`EngineMeter` counts the seconds inside engine steps (``busy_s``), the steps, and the requests in flight at
each step; it meters ``LLM.generate`` too (:func:`metered`), so the round-by-round and the continuous schedules are
measured alike (a stream's steps are the engine's). The stream owns the engine while it runs: it refuses an engine
with unfinished requests, and :meth:`EngineStream.close` aborts what a failed run leaves.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_IDS = itertools.count()


@dataclass
class EngineMeter:
    """Engine steps and the seconds spent in them; ``running`` sums the requests in flight at each step."""

    busy_s: float = 0.0
    steps: int = 0
    running: int = 0

    @property
    def mean_batch(self) -> float:
        return self.running / self.steps if self.steps else 0.0


@contextmanager
def metered(llm: Any, meter: EngineMeter) -> Iterator[EngineMeter]:
    """Count every engine step of ``llm`` (a ``vllm.LLM``) into ``meter`` for the ``with`` block; ``llm`` without
    an engine (a stand-in) is left alone."""
    engine = getattr(llm, "llm_engine", None)
    if engine is None:
        yield meter
        return
    step = engine.step
    outer = vars(engine).get("step")  # another meter's step on this engine (nested meters): back after this one

    def timed_step():
        running = engine.get_num_unfinished_requests()
        start = time.perf_counter()
        try:
            return step()
        finally:
            meter.busy_s += time.perf_counter() - start
            meter.steps += 1
            meter.running += running

    engine.step = timed_step
    try:
        yield meter
    finally:
        if outer is None:
            del engine.step  # the instance attribute: the class's own step again
        else:
            engine.step = outer


class EngineStream:
    """One engine, requests added and completions taken step by step (see the module docstring)."""

    def __init__(self, llm: Any):
        self.engine = llm.llm_engine
        if self.engine.has_unfinished_requests():
            raise RuntimeError("the engine still has unfinished requests: a stream needs it to itself")
        self._keys: dict[str, Hashable] = {}  # request id -> the caller's key
        self._added: dict[str, float] = {}  # request id -> the share clock when it was added
        self._clock = 0.0  # engine seconds per request in flight, summed over the steps

    @property
    def pending(self) -> int:
        """Requests added and not yet handed back."""
        return len(self._keys)

    def add(self, keys: Sequence[Hashable], prompt: Any, params: Any, lora_request: Any = None) -> None:
        """Add ``prompt`` (what ``LLM.generate`` takes) to be sampled ``len(keys)`` times with ``params`` (a vLLM
        ``SamplingParams`` whose ``n`` is ``len(keys)``); sample ``k`` comes back under ``keys[k]``."""
        from vllm.sampling_params import RequestOutputKind

        if params.n != len(keys):
            raise ValueError(f"{len(keys)} keys for a prompt sampled {params.n} times")
        params.output_kind = RequestOutputKind.FINAL_ONLY  # one output per request, when it ends
        rid = f"zoomzero-{next(_IDS)}"
        if params.n == 1:
            self.engine.add_request(rid, prompt, params, lora_request=lora_request)
            return self._track([rid], keys)
        children = [f"{k}_{rid}" for k in range(params.n)]  # vLLM's names for a prompt's samples (ParentRequest)
        states = getattr(getattr(self.engine, "output_processor", None), "request_states", None)
        if states is None:
            return self._add_apart(rid, keys, prompt, params, lora_request)
        self.engine.add_request(rid, prompt, params, lora_request=lora_request)
        if not all(c in states and hasattr(states[c], "parent_req") for c in children):
            self.engine.abort_request(children + [rid])
            return self._add_apart(rid, keys, prompt, params, lora_request)
        for child in children:
            states[child].parent_req = None  # handed back alone, when it ends
        # vLLM forgets a parent when its last child ends through it; detached children never do: forget it now
        getattr(self.engine.output_processor, "parent_requests", {}).pop(rid, None)
        self._track(children, keys)

    def _add_apart(self, rid: str, keys: Sequence[Hashable], prompt: Any, params: Any, lora_request: Any) -> None:
        """Each sample a request of its own, seeded as vLLM seeds a prompt's samples (``seed + k``)."""
        ids = []
        for k in range(params.n):
            child = params.clone()
            child.n = 1
            if params.seed is not None:
                child.seed = params.seed + k
            ids.append(f"{k}_{rid}")
            self.engine.add_request(ids[-1], prompt, child, lora_request=lora_request)
        self._track(ids, keys)

    def _track(self, ids: Sequence[str], keys: Sequence[Hashable]) -> None:
        for rid, key in zip(ids, keys):
            self._keys[rid] = key
            self._added[rid] = self._clock

    def step(self) -> list[tuple[Hashable, Any, Any, float]]:
        """One engine step; the requests it finished as ``(key, CompletionOutput, RequestOutput, engine seconds)``,
        where the seconds are the request's share of the steps it was in flight for (a step's time split evenly)."""
        running = len(self._keys)
        start = time.perf_counter()
        outputs = self.engine.step()
        self._clock += (time.perf_counter() - start) / max(running, 1)
        done = []
        for output in outputs:
            if output.finished and output.request_id in self._keys:
                key = self._keys.pop(output.request_id)
                done.append((key, output.outputs[0], output, self._clock - self._added.pop(output.request_id)))
        return done

    def close(self) -> None:
        """Abort every request not handed back (after a failure: the engine is left empty)."""
        if self._keys:
            self.engine.abort_request(list(self._keys))
            self._keys.clear()
            self._added.clear()
