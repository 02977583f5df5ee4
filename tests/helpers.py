"""Small helpers shared by the top-level tests."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from zoomzero_plugin.agent import response_text
from zoomzero_plugin.agent.render import QWEN_IMAGE


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


@contextlib.contextmanager
def no_network():
    """A Hugging Face Hub endpoint on a machine without network, made deterministic: a local port that accepts each
    connection and closes it at once (what a refused or dropped connection gives the client). Yields
    ``(endpoint, connections)``; ``connections()`` counts the connections made so far (each request, each retry)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    count = [0]

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: done
                return
            count[0] += 1
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", lambda: count[0]
    finally:
        server.close()
        thread.join(timeout=5)


LAUNCH_LOCK_ENV = "ZOOMZERO_TEST_LAUNCH_LOCK"


def launch_lock_path() -> Path:
    """The machine-wide lock file of ``one_launch_at_a_time`` (the temp folder, or ``$ZOOMZERO_TEST_LAUNCH_LOCK``)."""
    return Path(os.environ.get(LAUNCH_LOCK_ENV) or Path(tempfile.gettempdir()) / "zoomzero-tests-launch.lock")


@contextlib.contextmanager
def one_launch_at_a_time(what: str):
    """Held around each test step that starts a Ray node (a whole ``easyr1 train`` / ``zoomzero verl train`` launch, a
    test's own ``ray.init``), by every pytest process on the machine: an exclusive ``flock``, waited for.

    CI runs the vLLM and the verl suites side by side on 2 cores and 24 GB; two launches at once pass Ray's memory
    monitor's threshold (95% of the machine), and it kills workers of both runs (CI of 2026-11-28: an ``easyr1 train``
    and a ``zoomzero verl train`` failed together). A wait of over a second is written to stderr (``-s`` shows it)."""
    path = launch_lock_path()
    with open(path, "a") as handle:
        start = time.monotonic()
        fcntl.flock(handle, fcntl.LOCK_EX)
        waited = time.monotonic() - start
        if waited > 1:
            print(f"[{what}] waited {waited:.0f} s for another test's launch ({path})", file=sys.stderr)
        try:
            yield waited
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def covered_length(spans, lo: float = float("-inf"), hi: float = float("inf")) -> float:
    """Length of the union of ``spans`` inside [lo, hi], by elementary segments: cut the line at every end
    point and add up each piece that some span covers. An oracle for the project's sweep over merged spans."""
    return overlap_and_union(spans, [], lo, hi)[1]


def overlap_and_union(a, b, lo: float = float("-inf"), hi: float = float("inf")) -> tuple[float, float]:
    """(|∪a ∩ ∪b|, |∪a ∪ ∪b|) inside [lo, hi], by elementary segments (see :func:`covered_length`)."""
    cuts = sorted({min(max(x, lo), hi) for s, e in [*a, *b] for x in (s, e)})
    inter = union = 0.0
    for left, right in zip(cuts, cuts[1:]):
        mid = (left + right) / 2
        in_a, in_b = any(s <= mid < e for s, e in a), any(s <= mid < e for s, e in b)
        inter += (right - left) * (in_a and in_b)
        union += (right - left) * (in_a or in_b)
    return inter, union


def iou_oracle(pred, gt, duration: float) -> float:
    """Zoom-Zero's iou reward by definition: |∪pred ∩ ∪gt| / |∪pred ∪ ∪gt| within [0, duration]; 0 if empty."""
    inter, union = overlap_and_union(pred, gt, 0.0, duration)
    return inter / union if union > 0 else 0.0


def played(trajectory, turns) -> str:
    """Step ``trajectory`` (an agent Trajectory) through the assistant ``turns``; the response string a rollout
    decodes: every turn and the observation that followed it, frames as Qwen image placeholders."""
    pairs = []
    for text in turns:
        step = trajectory.step(text)
        pairs.append((step.turn.text, step.observation.text(QWEN_IMAGE) if step.observation else None))
    return response_text(pairs)


def doctor_as_a_user_runs_it(module: str, *args: str) -> tuple[list[str], list[str]]:
    """``python -m module args…`` in a fresh process, as a user runs a doctor (``VLLM_LOGGING_LEVEL`` unset, so vLLM
    logs at its default); asserts exit 0 and returns (its stdout's lines, those of them that are vLLM log lines)."""
    env = {k: v for k, v in os.environ.items() if k != "VLLM_LOGGING_LEVEL"}
    done = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    return lines, [x for x in lines if re.match(r"(INFO|DEBUG) \d", x)]
