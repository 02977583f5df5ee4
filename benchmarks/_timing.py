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


def fastest(
    variants: dict[str, Callable[[], object]], repeat: int, before: Callable[[], object] | None = None
) -> dict[str, tuple[float, object]]:
    """Run every variant ``repeat`` times round-robin (the machine is shared) and keep, per label, the fastest
    run's (wall seconds, result). ``before`` runs, untimed, before every run (e.g. to empty a cache)."""
    best: dict[str, tuple[float, object]] = {}
    for _ in range(repeat):
        for label, run in variants.items():
            if before is not None:
                before()
            start = time.perf_counter()
            result = run()
            wall = time.perf_counter() - start
            if label not in best or wall < best[label][0]:
                best[label] = (wall, result)
    return best


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"\n{title}\n{'-' * len(title)}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
