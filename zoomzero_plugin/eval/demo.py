"""Inputs for a CPU evaluation demo: the tiny random Qwen2.5-VL and a synthetic grounded-QA benchmark.

Nothing is downloaded. The model's weights are random, so its answers are chance-level and it writes no
valid spans: the demo shows the pipeline (passes, frames, budgets, metrics, report, plots), not accuracy.
"""

from __future__ import annotations

from pathlib import Path

from ..synthetic.benchmark import make_benchmark
from ..synthetic.tiny_qwen import build_tiny_qwen


def prepare_demo(directory: str | Path, n_videos: int = 8, seed: int = 0) -> tuple[Path, Path]:
    """Build (once) the tiny model and the synthetic benchmark under ``directory``; return their paths."""
    directory = Path(directory)
    model, rows = directory / "tiny-qwen", directory / "synthetic" / "rows.jsonl"
    if not (model / "config.json").exists():
        build_tiny_qwen(model, seed=seed)
    if not rows.exists():
        make_benchmark(rows.parent, n_videos=n_videos, seed=seed)
    return model, rows
