"""The learning-curve scripts' launcher (benchmarks/learning_curve.py ``run_tied``): an interrupted script ends the
``easyr1 train`` it started, and whatever that started, instead of leaving a run computing unrecorded.

Each case runs a small driver script that launches, through ``run_tied``, a child that starts a grandchild
(``sleep``) and writes both pids; the test then interrupts the driver the way a user would and looks at the pids."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "learning_curve.py"

CHILD = """
import os, subprocess, sys, time
sleeper = subprocess.Popen(["sleep", "300"])
open(sys.argv[1] + ".tmp", "w").write(f"{os.getpid()} {sleeper.pid}")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
"""

DRIVER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("lc", sys.argv[1])
lc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lc)
code = lc.run_tied([sys.executable, "-c", sys.argv[2], sys.argv[3]], grace=5)
print("exit", code)
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and prctl: Linux")


def alive(pid: int) -> bool:
    """Running (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def start(tmp_path: Path, child: str = CHILD) -> tuple[subprocess.Popen, list[int]]:
    pids = tmp_path / "pids"
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(SCRIPT), child, str(pids)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a background job of a non-interactive shell (``cmd &`` in a script, CI) inherits SIGINT
        # ignored, and Python then installs no KeyboardInterrupt handler — Ctrl-C cannot reach such a process anyway
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not pids.is_file():
        assert time.monotonic() < deadline and driver.poll() is None, driver.communicate()
        time.sleep(0.1)
    return driver, [int(p) for p in pids.read_text().split()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_script_ends_its_run_and_what_the_run_started(tmp_path, sig):
    driver, (child, grandchild) = start(tmp_path)
    assert alive(child) and alive(grandchild)
    driver.send_signal(sig)
    out, err = driver.communicate(timeout=30)
    assert driver.returncode != 0 and "exit" not in out, "the interrupt goes on after the group is ended"
    assert gone_within([child, grandchild], 10), "the run's process group outlived the interrupted script"


def test_a_killed_script_takes_its_run_with_it(tmp_path):
    """SIGKILL cannot be caught: the child's parent-death signal ends it (what the child started is its own to end:
    Ray's daemons share their driver's fate; here the test cleans the sleeper up)."""
    driver, (child, grandchild) = start(tmp_path)
    try:
        driver.kill()
        driver.wait(timeout=30)
        assert gone_within([child], 10), "the run outlived its killed script"
    finally:
        if alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_the_run_s_exit_code_comes_back(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(SCRIPT), "import sys; sys.exit(3)", str(tmp_path / "unused")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.split() == ["exit", "3"], done.stderr
