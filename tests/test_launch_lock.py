"""``tests.helpers.one_launch_at_a_time``: the lock every Ray-starting test step takes, so that the vLLM and verl
suites, side by side in CI, never run two training launches at once (Ray's memory monitor killed both when they did)."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.helpers import LAUNCH_LOCK_ENV, launch_lock_path, one_launch_at_a_time

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
HOLD = """
import sys, time
from tests.helpers import one_launch_at_a_time
with one_launch_at_a_time("holder"):
    print("held", flush=True)
    time.sleep(float(sys.argv[1]))
"""


def test_a_second_process_waits_until_the_first_launch_ends(tmp_path, monkeypatch, capfd):
    lock = tmp_path / "launch.lock"
    monkeypatch.setenv(LAUNCH_LOCK_ENV, str(lock))
    assert launch_lock_path() == lock
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "3"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"  # the other process holds it now, for 3 s
        start = time.monotonic()
        with one_launch_at_a_time("second") as waited:
            assert time.monotonic() - start > 2, "entered while the other launch still held the lock"
        assert waited > 2
        assert "[second] waited" in capfd.readouterr().err
    finally:
        holder.kill()
        holder.wait()


def test_an_uncontended_lock_is_taken_at_once_and_given_back(tmp_path, monkeypatch):
    monkeypatch.setenv(LAUNCH_LOCK_ENV, str(tmp_path / "launch.lock"))
    with one_launch_at_a_time("first") as waited:
        assert waited < 1
    # given back: another process takes it at once
    done = subprocess.run([sys.executable, "-c", HOLD, "0"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "held" and "waited" not in done.stderr


def test_the_default_lock_is_one_file_in_the_temp_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(LAUNCH_LOCK_ENV, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    assert launch_lock_path() == tmp_path / "zoomzero-tests-launch.lock"
