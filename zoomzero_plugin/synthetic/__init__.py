"""Synthetic inputs for tests, demos and benchmarks, built offline: :mod:`.tiny_qwen` (tiny random Qwen2.5-VL and
Qwen3-VL models with real processors), :mod:`.videos` (mp4s whose evidence sits in known spans), :mod:`.benchmark`
(small benchmarks and the learning curves' task), :mod:`.adversarial` (degenerate model outputs),
:mod:`.template_sampler` (template-shaped responses from a tiny model), :mod:`.warm_start` (teaching a tiny model
the formats), :mod:`.sft` (a warm start's supervised steps), :mod:`.agent_probe` (what an agent warm start
gives: valid calls, colours named) and :mod:`.grounded_probe` (what a Zoom-Zero warm start gives: coarse answers in
the template). Names load their modules on first use.
"""

from ..lazy import lazy_names

_NAMES = {
    **dict.fromkeys(("build_processor", "build_tiny_qwen", "build_tokenizer"), "tiny_qwen"),
    **dict.fromkeys(("Evidence", "dominant_color", "write_video"), "videos"),
    "make_benchmark": "benchmark",
    "adversarial_responses": "adversarial",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)
