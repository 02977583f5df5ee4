"""Plugin rollouts (:class:`~.hookspecs.Rollout`) inside EasyR1: who generates a batch, and how a round is generated.

Driver side (the trainer's ``Runner``): while ``_make_batch_data`` or ``_validate`` runs for a recipe that enables
a plugin rollout, ``trainer.actor_rollout_ref_wg`` is a :class:`RoutedWorkerGroup`: its ``generate_sequences``
marks the batch's ``meta_info`` with the rollout's name and options (:data:`ROLLOUT_KEY`) and calls the real worker
group, so EasyR1's own dispatch (data-parallel chunks, padding) is unchanged. Rollout hooks run with the real
worker group (:func:`unrouted`): the zoom pass is a plain single-turn generation.

Per-row fields: EasyR1 sends ``generate_sequences`` only the prompt ids and ``multi_modal_data`` of each row. For a
rollout that needs more of the row (its ``row_fields``, e.g. the ground truth's question and options), the trainer's
datasets are marked when the trainer is built (before any data-loader worker starts) and the wrapped
``RLHFDataset.__getitem__`` copies those fields into the row's ``multi_modal_data`` under :data:`ROW_FIELDS_KEY`
(EasyR1 reads only its ``images``/``videos`` keys).

Worker side: the wrapped ``FSDPWorker.generate_sequences`` reads the mark and, for the length of EasyR1's own
``generate_sequences`` (end-of-sequence ids, the tensor-parallel gather and scatter, the copy to CPU), puts the plugin
rollout in place of ``self.rollout``. The plugin gets a :class:`RolloutWorker`, whose :meth:`~RolloutWorker.round` runs
one engine call through EasyR1's real ``vLLMRollout.generate_sequences`` and returns the sampled token ids (and the
sampler's log-probs) exactly, as vLLM returned them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from zoomzero_plugin.engine.stream import EngineStream

from . import clips
from .errors import PluginError
from .hookspecs import Rollout
from .state import current_host
from .vllm_engine import with_sample_fps

ROLLOUT_KEY = "easyr1_rollout"  # meta_info: {"name": rollout name, "options": {...}}
ROW_FIELDS_KEY = "easyr1_row_fields"  # multi_modal_data: {field: value} for the rollout's row_fields
_ROW_FIELDS_ATTR = "_easyr1_row_fields"  # on a dataset: which fields its items carry into multi_modal_data


# -- driver ------------------------------------------------------------------------------------------------


class RoutedWorkerGroup:
    """``actor_rollout_ref_wg`` while a plugin rollout owns generation: marks every ``generate_sequences`` batch."""

    def __init__(self, real: Any, rollout: Rollout, options: Mapping[str, Any]):
        self.real, self.rollout, self.options = real, rollout, dict(options)

    def generate_sequences(self, prompts: Any) -> Any:
        prompts.meta_info = {**prompts.meta_info, ROLLOUT_KEY: {"name": self.rollout.name, "options": self.options}}
        output = self.real.generate_sequences(prompts)
        output.meta_info.pop(ROLLOUT_KEY, None)
        return output

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@contextmanager
def routed(trainer: Any, selection: tuple[Rollout, Mapping[str, Any]] | None) -> Iterator[None]:
    """Send ``trainer``'s generation to the selected plugin rollout for the ``with`` block (None: no change)."""
    if selection is None or isinstance(trainer.actor_rollout_ref_wg, RoutedWorkerGroup):
        yield
        return
    real = trainer.actor_rollout_ref_wg
    trainer.actor_rollout_ref_wg = RoutedWorkerGroup(real, *selection)
    try:
        yield
    finally:
        trainer.actor_rollout_ref_wg = real


@contextmanager
def unrouted(trainer: Any) -> Iterator[None]:
    """The real worker group for the ``with`` block (rollout hooks generate single-turn passes)."""
    group = trainer.actor_rollout_ref_wg
    if not isinstance(group, RoutedWorkerGroup):
        yield
        return
    trainer.actor_rollout_ref_wg = group.real
    try:
        yield
    finally:
        trainer.actor_rollout_ref_wg = group


def mark_row_fields(dataloaders: Sequence[Any], fields: Sequence[str]) -> None:
    """Make the datasets behind ``dataloaders`` copy ``fields`` into each item's ``multi_modal_data``."""
    for loader in dataloaders:
        dataset = getattr(loader, "dataset", None)
        if dataset is not None:
            setattr(dataset, _ROW_FIELDS_ATTR, tuple(fields))


def wrap_dataset_getitem(original: Callable) -> Callable:
    def __getitem__(self, index):
        example = original(self, index)
        fields = getattr(self, _ROW_FIELDS_ATTR, ())
        media = example.get("multi_modal_data")
        if fields and isinstance(media, dict):
            example["multi_modal_data"] = {**media, ROW_FIELDS_KEY: {f: example.get(f) for f in fields}}
        return example

    return __getitem__


def row_fields(multi_modal_data: Any) -> dict[str, Any]:
    """The row fields the host put into one row's ``multi_modal_data`` (empty when none)."""
    return dict((multi_modal_data or {}).get(ROW_FIELDS_KEY) or {})


# -- worker ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Completion:
    """One sampled continuation: its token ids and, when asked for, the sampler's log-prob of each."""

    token_ids: list[int]
    logprobs: list[float] | None = None


class _Recorder:
    """Stands in for the vLLM engine during one ``generate_sequences``: passes every call through and keeps the
    ``RequestOutput``s (EasyR1 pads the token ids and drops the log-probs; a multi-turn rollout needs both)."""

    def __init__(self, engine: Any, offsets: Sequence[int] | None = None):
        self.engine, self.outputs, self.offsets = engine, None, offsets

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        if self.offsets is not None and "sampling_params" in kwargs:  # one seed per prompt (EasyR1 passes keywords)
            kwargs["sampling_params"] = [seeded(kwargs["sampling_params"], o) for o in self.offsets]
        self.outputs = self.engine.generate(*args, **kwargs)
        return self.outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


def seeded(params: Any, offset: int) -> Any:
    """A copy of vLLM ``SamplingParams`` seeded ``offset`` past its own seed (an unseeded one stays unseeded).

    EasyR1 gives every request of a generation one seed, and vLLM seeds a prompt's ``n`` samples ``seed + k``; the
    later turns of a multi-turn rollout are one request per trajectory, and with one seed for all of them two
    trajectories at the same point (the same call, the same clip) would draw the same tokens: each gets its own."""
    out = params.clone() if hasattr(params, "clone") else copy.copy(params)  # vLLM's, or a stand-in
    if getattr(out, "seed", None) is not None:
        out.seed = int(out.seed) + int(offset)
    return out


def _completion(output: Any, logprobs: bool) -> Completion:
    ids = [int(t) for t in output.token_ids]
    if not logprobs:
        return Completion(ids)
    steps = output.logprobs
    if steps is None or len(steps) != len(ids):
        raise RuntimeError("the rollout engine returned no log-prob for some sampled tokens (SamplingParams.logprobs)")
    return Completion(ids, [float(step[t].logprob) for step, t in zip(steps, ids)])


class RolloutWorker:
    """What a plugin rollout gets in a rollout worker (an ``FSDPWorker``): tokenizer, processor, EasyR1's rollout
    config and one-call-per-round generation through EasyR1's own ``vLLMRollout.generate_sequences``."""

    def __init__(self, worker: Any, rollout: Any):
        self.tokenizer, self.processor = worker.tokenizer, worker.processor
        self.rollout = rollout  # EasyR1's vLLMRollout
        self.config = rollout.config  # RolloutConfig: prompt_length, response_length, n, temperature…
        self.prompt_length = int(self.config.prompt_length)  # the batch's widths
        self.response_length = int(self.config.response_length)

    def default_n(self) -> int:
        return int(self.rollout.sampling_params.n)

    def _batch(
        self,
        raw_prompt_ids: Sequence[Sequence[int]],
        multi_modal_data: Sequence[Any] | None,
        meta_info: Mapping[str, Any],
    ) -> Any:
        """The ``DataProto`` EasyR1's ``vLLMRollout.generate_sequences`` reads: raw ids, media, sampling keys."""
        from verl.protocol import DataProto

        k = len(raw_prompt_ids)
        ids = np.empty(k, dtype=object)
        ids[:] = [p if isinstance(p, list) else list(p) for p in raw_prompt_ids]
        non_tensors: dict[str, np.ndarray] = {"raw_prompt_ids": ids}
        if multi_modal_data is not None:
            media = np.empty(k, dtype=object)
            media[:] = list(multi_modal_data)
            non_tensors["multi_modal_data"] = media
        shape = torch.zeros((k, 1), dtype=torch.long)  # vLLMRollout only shapes its padded output with these
        return DataProto.from_dict(
            tensors={"input_ids": shape, "attention_mask": torch.ones_like(shape), "position_ids": shape.clone()},
            non_tensors=non_tensors,
            meta_info=copy.deepcopy(dict(meta_info)),
        )

    def _through_easyr1(self, engine: Any, batch: Any, response_length: int) -> None:
        """EasyR1's ``vLLMRollout.generate_sequences`` on ``batch`` with ``engine`` in place of vLLM's; its padded
        output is only shaped to ``response_length`` (nobody reads it)."""
        real, width = self.rollout.inference_engine, self.config.response_length
        self.rollout.inference_engine = engine
        self.config.response_length = int(response_length)
        try:
            self.rollout.generate_sequences(batch)
        finally:
            self.rollout.inference_engine = real
            self.config.response_length = width

    def round(
        self,
        raw_prompt_ids: Sequence[Sequence[int]],
        multi_modal_data: Sequence[Any] | None,
        meta_info: Mapping[str, Any],
        offsets: Sequence[int] | None = None,
    ) -> list[list[Completion]]:
        """One engine call: every prompt (raw ids, as vLLM reads them) with its media, sampled as ``meta_info``
        says (EasyR1's keys: ``n``, ``temperature``, ``max_tokens``, ``stop``… and the pixel limits); with
        ``offsets``, prompt ``i`` seeded ``offsets[i]`` past the generation's seed (:func:`seeded`).

        Returns, per prompt, its ``n`` completions, token ids exact (no padding) and, with ``logprobs`` in
        ``meta_info``, each sampled token's log-prob.
        """
        k = len(raw_prompt_ids)
        recorder = _Recorder(self.rollout.inference_engine, offsets)
        # EasyR1 pads every output to the response width; a round's output is only read here: pad it to the round
        batch = self._batch(raw_prompt_ids, multi_modal_data, meta_info)
        self._through_easyr1(recorder, batch, meta_info.get("max_tokens") or self.config.response_length)
        if recorder.outputs is None or len(recorder.outputs) != k:
            raise RuntimeError(
                f"the rollout engine answered {0 if recorder.outputs is None else len(recorder.outputs)} prompts of {k}"
            )
        wanted = meta_info.get("logprobs") is not None
        return [[_completion(o, wanted) for o in request.outputs] for request in recorder.outputs]

    def stream(self, meta_info: Mapping[str, Any]) -> RolloutStream | None:
        """Requests added one trajectory turn at a time to the engine EasyR1 built (continuous batching through
        vLLM's request-level API), or None where the engine has none (a stand-in engine)."""
        llm = self.rollout.inference_engine
        if getattr(llm, "llm_engine", None) is None:
            return None
        return RolloutStream(self, llm, meta_info)


class _Capture:
    """Stands in for the vLLM engine during one ``generate_sequences``: keeps the inputs, the sampling parameters
    and the LoRA request EasyR1 built for the engine, and generates nothing."""

    def __init__(self) -> None:
        self.prompts: list[Any] = []
        self.params: Any = None
        self.lora_request: Any = None

    def generate(
        self, prompts: Any, sampling_params: Any, use_tqdm: bool = False, lora_request: Any = None, **_: Any
    ) -> list[Any]:
        self.prompts = with_sample_fps(list(prompts))  # as the LLM seam sends them (vllm_engine)
        self.params, self.lora_request = sampling_params.clone(), lora_request
        empty = SimpleNamespace(outputs=[SimpleNamespace(token_ids=[])] * int(sampling_params.n))
        return [empty] * len(self.prompts)


class RolloutStream:
    """Trajectory turns to EasyR1's engine one request at a time (:class:`~zoomzero_plugin.engine.stream.
    EngineStream`), each built exactly as EasyR1's ``vLLMRollout.generate_sequences`` builds a prompt for vLLM (its
    media through ``process_image``/``process_video``, its sampling parameters from ``meta_info``); each request
    then gets its own ``max_tokens``, and a prompt sampled ``n`` times is added once (vLLM fans it out, sample ``k``
    seeded ``seed + k`` as in one ``generate``)."""

    def __init__(self, worker: RolloutWorker, llm: Any, meta_info: Mapping[str, Any]):
        self.worker, self.meta_info = worker, {**meta_info, "n": 1}
        self.logprobs = meta_info.get("logprobs") is not None
        self.engine = EngineStream(llm)

    @property
    def pending(self) -> int:
        return self.engine.pending

    def submit(
        self, items: Sequence[tuple[Sequence[Any], Sequence[int], Any, int]], offsets: Sequence[int] | None = None
    ) -> None:
        """Add ``(keys, raw prompt ids, multi_modal_data, max_tokens)`` items: a prompt sampled ``len(keys)``
        times, sample ``k`` handed back under ``keys[k]``; with ``offsets``, item ``i`` seeded ``offsets[i]`` past
        the generation's seed (:func:`seeded`)."""
        if not items:
            return
        capture = _Capture()
        batch = self.worker._batch([i[1] for i in items], [i[2] for i in items], self.meta_info)
        self.worker._through_easyr1(capture, batch, 1)
        for i, ((keys, _, _, max_tokens), prompt) in enumerate(zip(items, capture.prompts)):
            params = seeded(capture.params, offsets[i]) if offsets is not None else capture.params.clone()
            params.n, params.max_tokens = len(keys), int(max_tokens)
            self.engine.add(list(keys), prompt, params, capture.lora_request)

    def step(self) -> list[tuple[Any, Completion]]:
        """One engine step: ``(key, Completion)`` of every sample it finished."""
        return [(key, _completion(output, self.logprobs)) for key, output, _, _ in self.engine.step()]

    def close(self) -> None:
        self.engine.close()


class _PluginRollout:
    """Takes ``FSDPWorker.rollout``'s place while EasyR1's ``generate_sequences`` runs a plugin rollout."""

    def __init__(self, plugin: Rollout, worker: RolloutWorker, options: Mapping[str, Any]):
        self.plugin, self.worker, self.options = plugin, worker, options

    def generate_sequences(self, prompts: Any) -> Any:
        output = self.plugin.generate(self.worker, prompts, self.options)
        output.meta_info.pop(ROLLOUT_KEY, None)
        return output

    def __getattr__(self, name: str) -> Any:
        return getattr(self.worker.rollout, name)


def _prefetched(original: Callable, worker: Any, prompts: Any) -> Any:
    """EasyR1's single-turn ``generate_sequences``, with every row's videos decoding in the decode threads from the
    start (:func:`~.clips.prefetch_videos`)."""
    media, meta = prompts.non_tensor_batch.get("multi_modal_data"), prompts.meta_info
    if media is not None and {"min_pixels", "max_pixels", "video_fps"} <= set(meta):
        metadata = bool(getattr(getattr(worker, "rollout", None), "return_video_metadata", False))
        clips.prefetch_videos(media, meta["min_pixels"], meta["max_pixels"], meta["video_fps"], metadata)
    try:
        return original(worker, prompts)
    finally:
        clips.drop_prefetched()


def wrap_generate_sequences(original: Callable) -> Callable:
    def generate_sequences(self, prompts):
        selection = prompts.meta_info.get(ROLLOUT_KEY)
        if selection is None:
            return _prefetched(original, self, prompts)
        plugin = current_host().rollouts.get(selection["name"])
        if plugin is None:
            raise PluginError(
                f"the driver asked for the rollout {selection['name']!r}, which no easyr1 plugin in this "
                f"worker provides (installed: {sorted(current_host().rollouts) or 'none'})"
            )
        real = self.rollout
        self.rollout = _PluginRollout(plugin, RolloutWorker(self, real), selection["options"])
        try:
            return original(self, prompts)
        finally:
            self.rollout = real

    return generate_sequences
