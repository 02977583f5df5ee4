"""The example scripts run as a new user runs them: explaining what to do without data, and end to end on
the synthetic benchmark with DATA=synthetic."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = ["eval_nextgqa.sh", "eval_rextime.sh", "eval_cgbench.sh", "eval_long_video.sh", "eval_videozoomer.sh",
           "cpu_eval_demo.sh"]


def _run(script, cwd, **env):
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(["bash", str(EXAMPLES / script), *env.pop("args", [])], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, "PATH": path, **env}, timeout=300)


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_parse(script):
    assert subprocess.run(["bash", "-n", str(EXAMPLES / script)]).returncode == 0


@pytest.mark.parametrize("script", SCRIPTS[:5])
def test_without_data_the_scripts_say_what_to_do(script, tmp_path):
    done = _run(script, tmp_path)
    assert done.returncode == 1 and "DATA=synthetic" in done.stderr and "onvert" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_nextgqa_example_on_the_synthetic_benchmark(tmp_path):
    done = _run("eval_nextgqa.sh", tmp_path, DATA="synthetic", args=["--limit", "2", "--no-progress"])
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / "runs" / "eval-nextgqa"
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 2
    assert json.loads((out / "metrics.json").read_text())["benchmark"] == "nextgqa"
    assert "Acc@GQA" in (out / "report.md").read_text()


def test_videozoomer_example_on_the_synthetic_benchmark(tmp_path):
    done = _run("eval_videozoomer.sh", tmp_path, DATA="synthetic", args=["--limit", "2", "--no-progress"])
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / "runs" / "eval-videozoomer" / "longvideobench"
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["mode"] == "agent" and "transcript" in r for r in records)
    assert "## Tool use (agent)" in (out / "report.md").read_text()
