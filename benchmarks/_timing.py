"""Tiny timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], repeats: int = 30, warmup: int = 3) -> float:
    """Median wall time of ``fn()`` in milliseconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def best_ms(fn: Callable[[], object], repeats: int = 5) -> float:
    """Fastest of ``repeats`` runs of ``fn()`` in milliseconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return min(times)


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"\n{title}\n{'-' * len(title)}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
