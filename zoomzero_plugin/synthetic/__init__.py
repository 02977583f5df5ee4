"""Synthetic inputs for tests, demos and benchmarks, built offline: tiny random Qwen2.5-VL models, videos whose
evidence sits in known spans, small benchmarks and adversarial responses. Names load their modules on first use."""

from ..lazy import lazy_names

_NAMES = {
    **dict.fromkeys(("build_processor", "build_tiny_qwen", "build_tokenizer"), "tiny_qwen"),
    **dict.fromkeys(("Evidence", "dominant_color", "write_video"), "videos"),
    "make_benchmark": "benchmark",
    "adversarial_responses": "adversarial",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = [
    "Evidence",
    "adversarial_responses",
    "build_processor",
    "build_tiny_qwen",
    "build_tokenizer",
    "dominant_color",
    "make_benchmark",
    "write_video",
]
