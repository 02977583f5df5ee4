"""What EasyR1's rollout hands vLLM: every video's real sample rate, and an engine that also runs on a CPU.

Sample rate. EasyR1's ``vLLMRollout`` decodes each video with ``process_video`` and sends vLLM the bare frames
``(T, 3, H, W)`` without their rate, so vLLM's Qwen2/2.5-VL processor assumes 2 fps: a video sampled at any
other rate gets temporal M-RoPE positions (``t · (2 / fps) · tokens_per_second``) that differ from the
ones EasyR1's dataset and actor compute from the true rate — sampler and learner disagree on the time
encoding. The ``process_video`` seam records the sample rate (frames per second of video) of every frame
tensor it returns (:func:`record_sample_fps`), and the engine built by the wrapped ``LLM`` passes it to
vLLM per prompt as ``mm_processor_kwargs={"fps": …}``, for bare tensors and ``(frames, metadata)`` pairs alike
(vLLM 0.11's Qwen2.5-VL reads a video's rate only from that keyword; Qwen3-VL times its frames from the metadata,
and the keyword changes nothing there while frames are not sampled again).

CPU. vLLM's CPU platform has no sleep mode (it offloads weights from GPU memory while the actor trains),
and EasyR1 always asks for it. Where the platform lacks it the engine is built without it, and
``sleep``/``wake_up`` do nothing: the weights stay where they are, and EasyR1 loads the actor's weights into
them as usual. On the CPU platform the prefix cache is also off (vLLM 0.11's CPU attention fails on shared
cached blocks of several prompts' samples: :data:`~zoomzero_plugin.engine.cpu_platform.CPU_ENGINE_DEFAULTS`).
On a GPU the engine is built exactly as EasyR1 asks.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zoomzero_plugin.engine.cpu_platform import CPU_ENGINE_DEFAULTS, on_cpu

_SAMPLE_FPS: dict[int, tuple[weakref.ref, float, dict | None]] = {}  # id(frames) -> (frames, sample fps, metadata)


def record_sample_fps(frames: Any, fps: float, metadata: Mapping[str, Any] | None = None) -> None:
    """Remember that ``frames`` (a decoded video tensor) were sampled at ``fps`` frames per second of video, and the
    decoder's ``metadata`` of them (native frame indices and rate) where it is known."""
    try:
        ref = weakref.ref(frames)
    except TypeError:  # not a tensor (e.g. a list of images): nothing to pass on
        return
    key = id(frames)
    _SAMPLE_FPS[key] = (ref, float(fps), dict(metadata) if metadata is not None else None)
    weakref.finalize(frames, _SAMPLE_FPS.pop, key, None)


def sample_fps(frames: Any) -> float | None:
    """The rate recorded for exactly this tensor, or None."""
    entry = _SAMPLE_FPS.get(id(frames))
    return entry[1] if entry is not None and entry[0]() is frames else None


def recorded_metadata(frames: Any) -> dict[str, Any] | None:
    """The decoder metadata recorded for exactly this tensor, or None."""
    entry = _SAMPLE_FPS.get(id(frames))
    return dict(entry[2]) if entry is not None and entry[0]() is frames and entry[2] is not None else None


def with_sample_fps(prompts: Any) -> Any:
    """vLLM prompts with ``mm_processor_kwargs["fps"]`` set from the recorded rates of their videos.

    A prompt is changed only if it has videos, all of them frame tensors (bare or with metadata) with a recorded
    rate, and it sets no fps itself; one video gets a number, several a list (one rate per video, in order). Returns new
    dicts; the caller's are not modified.
    """
    if isinstance(prompts, Mapping):
        return _one(prompts)
    if isinstance(prompts, Sequence) and not isinstance(prompts, str):
        return [_one(p) if isinstance(p, Mapping) else p for p in prompts]
    return prompts


def _one(prompt: Mapping[str, Any]) -> Mapping[str, Any]:
    videos = ((prompt.get("multi_modal_data") or {}).get("video")) or []
    kwargs = dict(prompt.get("mm_processor_kwargs") or {})
    if not videos or "fps" in kwargs:
        return prompt
    rates = [sample_fps(v[0] if isinstance(v, tuple) else v) for v in videos]
    if any(r is None for r in rates):
        return prompt
    kwargs["fps"] = rates[0] if len(rates) == 1 else rates
    return {**prompt, "mm_processor_kwargs": kwargs}


def sleep_mode_available() -> bool:
    """Whether vLLM's current platform can offload an engine (CUDA: yes; CPU: no)."""
    from vllm.platforms import current_platform

    check = getattr(current_platform, "is_sleep_mode_available", None)
    return bool(check()) if check is not None else True


def wrap_llm(original: Callable) -> Callable:
    """EasyR1's ``LLM(...)`` (vllm.LLM as its rollout module imported it), with the two changes above."""

    def LLM(*args, **kwargs):  # noqa: N802 - stands where EasyR1 calls the class
        no_sleep = bool(kwargs.get("enable_sleep_mode")) and not sleep_mode_available()
        if no_sleep:
            kwargs["enable_sleep_mode"] = False
        if on_cpu():
            kwargs = {**CPU_ENGINE_DEFAULTS, **kwargs}
        engine = original(*args, **kwargs)
        generate = engine.generate

        def generate_with_fps(prompts, *rest, **options):
            return generate(with_sample_fps(prompts), *rest, **options)

        engine.generate = generate_with_fps
        if no_sleep:
            engine.sleep = _stay_awake
            engine.wake_up = _stay_awake
        return engine

    return LLM


def wrap_logit_bias(original: Callable) -> Callable:
    """EasyR1's ``_get_logit_bias(processor)`` (vLLM's logit bias for every rollout), with the video placeholder too.

    EasyR1 keeps vLLM from sampling the image placeholder token but not the video one (its own TODO): a sampled
    ``<|video_pad|>`` in a response makes the actor's forward stop ("Videos features and video tokens do not
    match"). Both get a bias of -100.
    """

    def _get_logit_bias(processor):
        bias = original(processor)
        token = getattr(processor, "video_token", None) if processor is not None else None
        if token is None:
            return bias
        return {**(bias or {}), processor.tokenizer.convert_tokens_to_ids(token): -100}

    return _get_logit_bias


def _stay_awake(level: int = 1, tags: list[str] | None = None) -> None:
    """``LLM.sleep``/``LLM.wake_up`` where the platform has no sleep mode: the engine keeps its memory."""
