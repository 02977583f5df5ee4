"""Small helpers shared by the top-level tests."""

from __future__ import annotations

import contextlib
import signal


@contextlib.contextmanager
def within_seconds(seconds: float):
    """Fail (TimeoutError) if the block runs longer than ``seconds``: a guard against hangs, e.g. a parser
    gone quadratic, with a margin of 100x or more over the expected time. Not a speed target (those live in
    benchmarks/). Unix main thread only."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
