"""``zoomzero demo --train``, the README's first command, as a user runs it in the vLLM environment: a tiny model
warm-started, the shipped Zoom-Zero recipe through ``easyr1 train --cpu``, one progress line per step, the merged
model evaluated, and a printed command that resumes the run from its checkpoint — run here as printed.

One step each (CI time; the README's run takes 4): the demo's step 1, then the resume command's step 2.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.easyr1.conftest import subprocess_env
from tests.helpers import one_launch_at_a_time

GAP = 1e-3  # the sampler check's bound (tests/vllm/test_train_cli.py)
STEP = re.compile(
    r"^step (\d+)/(\d+)  reward (-?[\d.]+) \(format [\d.]+, iou [\d.]+, accuracy [\d.]+, zoom [\d.]+\)  "
    r"loss ([-+][\d.]+)  sampler gap ([\d.e+-]+)  ([\d.]+) s$"
)


def zoomzero(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "zoomzero"
    env = subprocess_env(OMP_NUM_THREADS="1")
    env.pop("EASYR1_PLUGINS_CPU", None)
    with one_launch_at_a_time(f"zoomzero {args[0]}"):
        return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("demo-train")
    done = zoomzero("demo", "--train", "--steps", "1", cwd=cwd)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return cwd, (cwd / "zoomzero-demo" / "train" / "qwen2.5-vl").resolve(), done.stdout


def test_the_demo_prints_a_line_per_step_and_where_everything_is(demo):
    cwd, workdir, out = demo
    steps = [STEP.match(line) for line in out.splitlines() if line.startswith("step ")]
    assert len(steps) == 1 and steps[0], out
    step = steps[0]
    assert (step.group(1), step.group(2)) == ("1", "1")
    assert float(step.group(5)) < GAP, "vLLM sampled with the actor's weights"
    record = {}
    for line in (workdir / "metrics.jsonl").read_text().splitlines():  # the printed numbers are EasyR1's own
        record.update(json.loads(line))
    assert float(step.group(4)) == pytest.approx(record["actor/pg_loss"], abs=1e-4)
    assert float(step.group(3)) == pytest.approx(record["reward/overall"], abs=5e-3)
    files = ("tiny-model/", "warm-start/", "data/", "metrics.jsonl", "train.log", "checkpoints/", "model/", "eval/")
    files += ("resume.sh",)
    for name in files:
        assert f"  {name}" in out and (workdir / name).exists(), name
    assert (workdir / "checkpoints" / "global_step_1" / "actor").is_dir()
    assert (workdir / "model" / "config.json").is_file(), "easyr1 merge wrote a Hugging Face folder"
    metrics = json.loads((workdir / "eval" / "metrics.json").read_text())
    assert metrics and len((workdir / "eval" / "predictions.jsonl").read_text().splitlines()) == 8


def test_the_printed_command_resumes_from_the_checkpoint(demo):
    """The last line printed is ``bash …/resume.sh``: the demo's own ``easyr1 train`` with twice the steps, which
    EasyR1 resumes from the last checkpoint. Run from another folder, as printed."""
    cwd, workdir, out = demo
    printed = shlex.split(out.strip().splitlines()[-1])
    assert printed == ["bash", str(workdir / "resume.sh")]
    command = shlex.split((workdir / "resume.sh").read_text().replace("\\\n", " "), comments=True)
    assert Path(command[0]).name == "easyr1" and command[1] == "train" and "--cpu" in command
    assert command[-1] == "trainer.max_steps=2"
    env = subprocess_env(OMP_NUM_THREADS="1")
    env.pop("EASYR1_PLUGINS_CPU", None)
    elsewhere = cwd / "elsewhere"
    elsewhere.mkdir()
    with one_launch_at_a_time("bash resume.sh"):
        done = subprocess.run(printed, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    logged = [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]
    trained = sorted(r["step"] for r in logged if "actor/pg_loss" in r)
    assert trained == [1, 2], "the resumed launch ran step 2 only (the demo's step 1 is in the same file)"
    assert (workdir / "checkpoints" / "global_step_2" / "actor").is_dir()
