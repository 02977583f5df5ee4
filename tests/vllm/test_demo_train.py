"""``zoomzero demo --train``, the README's first command, as a user runs it in the vLLM environment, and through it
the shipped Zoom-Zero recipe on Qwen2.5-VL end to end: a tiny model warm-started, ``yamls/zoomzero.yaml`` through
``easyr1 train --cpu`` (EasyR1's own loop: its FSDPWorker over gloo, its vLLMRollout on vLLM's CPU engine, the weight
sync, the reward actors, checkpoint and resume), one progress line per step, ``easyr1 merge`` and ``zoomzero eval``
of the merged model, and a printed command that resumes the run from its checkpoint — run here as printed.

Three launches (CI time; the README's run takes 4 steps): the demo's step 1; the printed resume command, which loads
step 1's checkpoint and runs step 2; and the same command once more in a folder of its own, straight through steps 1
and 2 in one launch, whose step 2 the resumed one must log again. Qwen3-VL's launches, and VideoZoomer's:
tests/vllm/test_train_cli.py.

What a Zoom-Zero launch must show (the weight sync and why a resumed step repeats among it):
tests/vllm/zoomzero_checks.py.
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
from tests.vllm.zoomzero_checks import (
    GAP,
    actor_states,
    check_merged,
    check_resumed_step,
    check_two_zoomzero_steps,
    eval_args,
    logged_steps,
)

STEP = re.compile(
    r"^step (\d+)/(\d+)  reward (-?[\d.]+) \(format [\d.]+, iou [\d.]+, accuracy [\d.]+, zoom [\d.]+\)  "
    r"loss ([-+][\d.]+)  sampler gap ([\d.e+-]+)  ([\d.]+) s$"
)


def launch(argv: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess:
    env = subprocess_env(OMP_NUM_THREADS="1")
    env.pop("EASYR1_PLUGINS_CPU", None)
    with one_launch_at_a_time(what):
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{what} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("demo-train")
    exe = str(Path(sys.executable).parent / "zoomzero")
    done = launch([exe, "demo", "--train", "--steps", "1"], cwd, "zoomzero demo")
    return cwd, (cwd / "zoomzero-demo" / "train" / "qwen2.5-vl").resolve(), done.stdout


@pytest.fixture(scope="module")
def resumed(demo):
    """The last line the demo printed (``bash …/resume.sh``), run from another folder: EasyR1 loads the step-1
    checkpoint and trains step 2, logging to the demo's metrics file. Returns the file's records per step."""
    cwd, workdir, out = demo
    elsewhere = cwd / "elsewhere"
    elsewhere.mkdir()
    launch(shlex.split(out.strip().splitlines()[-1]), elsewhere, "bash resume.sh")
    return logged_steps(workdir / "metrics.jsonl")


def resume_command(workdir: Path) -> list[str]:
    return shlex.split((workdir / "resume.sh").read_text().replace("\\\n", " "), comments=True)


@pytest.fixture(scope="module")
def straight(demo):
    """resume.sh's ``easyr1 train`` with a checkpoint folder and metrics file of its own: steps 1 and 2 in one
    launch, from the warm start. Returns ``(its folder, its records per step)``."""
    cwd, workdir, _ = demo
    run = cwd / "straight"
    run.mkdir()
    command = resume_command(workdir)
    command[command.index("--metrics-file") + 1] = str(run / "metrics.jsonl")
    (saving,) = [i for i, part in enumerate(command) if part.startswith("trainer.save_checkpoint_path=")]
    command[saving] = f"trainer.save_checkpoint_path={run / 'checkpoints'}"
    launch(command, run, "easyr1 train (straight)")
    return run, logged_steps(run / "metrics.jsonl")


def test_the_demo_prints_a_line_per_step_and_where_everything_is(demo):
    cwd, workdir, out = demo
    steps = [STEP.match(line) for line in out.splitlines() if line.startswith("step ")]
    assert len(steps) == 1 and steps[0], out
    step = steps[0]
    assert (step.group(1), step.group(2)) == ("1", "1")
    assert float(step.group(5)) < GAP, "vLLM sampled with the actor's weights"
    record = logged_steps(workdir / "metrics.jsonl")[1]  # the printed numbers are EasyR1's own
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


def test_the_printed_command_resumes_from_the_checkpoint(demo, resumed):
    """The last line printed is ``bash …/resume.sh``: the demo's own ``easyr1 train`` with twice the steps, which
    EasyR1 resumes from the last checkpoint (run from another folder, as printed)."""
    cwd, workdir, out = demo
    assert shlex.split(out.strip().splitlines()[-1]) == ["bash", str(workdir / "resume.sh")]
    command = resume_command(workdir)
    assert Path(command[0]).name == "easyr1" and command[1] == "train" and "--cpu" in command
    assert command[-1] == "trainer.max_steps=2"
    trained = sorted(step for step, m in resumed.items() if "actor/pg_loss" in m)
    assert trained == [1, 2], "the resumed launch ran step 2 only (the demo's step 1 is in the same file)"
    assert (workdir / "checkpoints" / "global_step_2" / "actor").is_dir()


def test_the_loop_logs_each_stage_and_vllm_samples_with_the_updated_weights(straight):
    check_two_zoomzero_steps(straight[1], validated=(2,))  # the demo's command validates after the last step


def test_the_resumed_step_2_is_the_straight_run_s_step_2(resumed, straight):
    check_resumed_step(resumed[2], straight[1][2])


def test_each_update_changes_the_actor_and_merge_gives_a_model_zoomzero_eval_runs(demo, resumed):
    """The actor shards of steps 1 (the demo's) and 2 (the resumed launch's) differ from the model before each; the
    demo's ``easyr1 merge`` of step 1 equals its shards; ``zoomzero eval`` runs the merged model in one-stage mode
    too (the demo ran coarse-to-fine)."""
    from zoomzero_plugin.commands.train_demo import TinyRun

    cwd, workdir, _ = demo
    state = actor_states(workdir / "checkpoints", (1, 2), workdir / "warm-start")
    check_merged(workdir / "model", state[1])
    out, exe = cwd / "eval-one-stage", str(Path(sys.executable).parent / "zoomzero")
    argv = [exe, *eval_args("one-stage", workdir / "model", workdir / "data" / "train.jsonl", out, TinyRun(28))]
    done = subprocess.run(argv, cwd=cwd, env=subprocess_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 1
    assert json.loads((out / "metrics.json").read_text())
