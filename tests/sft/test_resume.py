"""A teacher export killed mid-run (SIGKILL) and started again: nothing lost, nothing sent twice except the one
request that was in flight when it died."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

from tests.sft.helpers import ScriptedTeacher
from tests.sft.teacher_server import TeacherServer


def test_killed_export_resumes_from_its_journal(tmp_path, sft_rows):
    teacher = ScriptedTeacher(sft_rows)
    release = threading.Event()

    def reply(body, n):
        if n == 3:  # the third request hangs until the exporter has been killed
            release.wait(30)
        return teacher(body, n)

    out, journal = tmp_path / "out", tmp_path / "replies.jsonl"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "FORCE_QWENVL_VIDEO_READER": "decord"}
    with TeacherServer(reply) as server:
        argv = [
            sys.executable,
            "-m",
            "zoomzero_plugin.commands.cli",
            "data",
            "export-sft",
            "--format",
            "llamafactory",
            "--source",
            "teacher",
            "--data",
            str(sft_rows),
            "--out",
            str(out),
            "--journal",
            str(journal),
            "--teacher-url",
            server.url,
            "--teacher-model",
            "t",
            "--teacher-workers",
            "1",
            "--no-progress",
            "--no-llamafactory-check",
        ]
        first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while len(server.requests) < 3 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert len(server.requests) == 3, first.communicate()[0].decode()[-2000:]
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        release.set()
        assert not out.exists()  # nothing half-written
        assert len(journal.read_text().splitlines()) == 2  # the two answered requests

        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stdout + second.stderr
    bodies = [json.dumps(b, sort_keys=True) for b in server.requests]
    assert len(bodies) == 3 + 4  # 3 questions x (call, answer) = 6 requests; the in-flight one asked again
    assert bodies[3] == bodies[2] and set(bodies[:2]).isdisjoint(bodies[3:])
    assert len(set(bodies)) == 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["teacher_requests"] == {"sent": 4, "replayed": 2}
    assert summary["kept"] == {"teacher": 3}
    assert "teacher requests: 4 sent, 2 replayed from the journal" in second.stdout
