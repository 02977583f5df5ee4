"""``zoomzero demo --train``, the README's first command, as a user runs it in the vLLM environment, and through it
the shipped Zoom-Zero recipe on Qwen2.5-VL end to end: a tiny model warm-started, ``yamls/zoomzero.yaml`` through
``easyr1 train --cpu`` (EasyR1's own loop: its FSDPWorker over gloo, its vLLMRollout on vLLM's CPU engine, the weight
sync, the reward actors, checkpoint and resume), one progress line per step, ``easyr1 merge`` and ``zoomzero eval``
of the merged model, and a printed command that resumes the run from its checkpoint — run here as printed.

Three launches (CI time; the README's run takes 4 steps): the demo's step 1; the printed resume command, which loads
step 1's checkpoint and runs step 2; and the same command once more in a folder of its own, straight through steps 1
and 2 in one launch. The host seeds step s's sampling with ``worker.rollout.seed + 1000 * s``, so with step 1's weights
loaded and synced and the data loader where it was, the resumed step 2 must log what the straight run's step 2 logs
(rewards, lengths, losses, gradient norm); starting weights, a data loader started over or stale weights in vLLM each
change it. Qwen3-VL's launches, and VideoZoomer's: tests/vllm/test_train_cli.py.

Weight sync: in CPU mode EasyR1's rollout keeps vLLM's log-prob of every sampled token and the step logs how far it
is from the actor's (``rollout/logprob_gap_max``); with fp32 on both sides it is float noise (~3e-5) when vLLM has
the weights the actor trained, and about the size of the update (> 1e-2 here) when it does not.
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

GAP = 1e-3  # max |vLLM log-prob - actor log-prob| of a sampled token when the weights agree (fp32: ~3e-5 measured)
STEP = re.compile(
    r"^step (\d+)/(\d+)  reward (-?[\d.]+) \(format [\d.]+, iou [\d.]+, accuracy [\d.]+, zoom [\d.]+\)  "
    r"loss ([-+][\d.]+)  sampler gap ([\d.e+-]+)  ([\d.]+) s$"
)
# what the resumed step 2 must log as the straight run's step 2 does
SAME = (
    "reward/overall",
    "reward/format",
    "reward/iou",
    "reward/zoom",
    "prompt_length/mean",
    "response_length/mean",
    "actor/pg_loss",
    "actor/kl_loss",
    "actor/grad_norm",
)


def launch(argv: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess:
    env = subprocess_env(OMP_NUM_THREADS="1")
    env.pop("EASYR1_PLUGINS_CPU", None)
    with one_launch_at_a_time(what):
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{what} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def logged(metrics: Path) -> dict[int, dict]:
    """EasyR1's metrics file per step (the several log calls of a step merged)."""
    steps: dict[int, dict] = {}
    for line in metrics.read_text().splitlines():
        record = json.loads(line)
        steps.setdefault(record.pop("step"), {}).update(record)
    return steps


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
    return logged(workdir / "metrics.jsonl")


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
    return run, logged(run / "metrics.jsonl")


def test_the_demo_prints_a_line_per_step_and_where_everything_is(demo):
    cwd, workdir, out = demo
    steps = [STEP.match(line) for line in out.splitlines() if line.startswith("step ")]
    assert len(steps) == 1 and steps[0], out
    step = steps[0]
    assert (step.group(1), step.group(2)) == ("1", "1")
    assert float(step.group(5)) < GAP, "vLLM sampled with the actor's weights"
    record = logged(workdir / "metrics.jsonl")[1]  # the printed numbers are EasyR1's own
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
    assert resumed[2]["actor/kl_loss"] > 1e-6, "the resumed actor is the starting model, not step 1's"
    assert resumed[2]["rollout/logprob_gap_max"] < GAP, "vLLM did not get the loaded weights"


def test_the_loop_logs_each_stage_and_vllm_samples_with_the_updated_weights(straight):
    _, metrics = straight
    assert sorted(step for step, m in metrics.items() if "actor/pg_loss" in m) == [1, 2]
    for step in (1, 2):
        m = metrics[step]
        # EasyR1's own metrics of each stage of its loop
        for key in (
            "timing_s/gen",
            "timing_s/old",
            "timing_s/ref",
            "timing_s/update_actor",
            "actor/pg_loss",
            "actor/grad_norm",
            "critic/score/mean",
            "response_length/mean",
        ):
            assert key in m, key
        # this package's: every reward component, the zoom pass, TokenAdv's token split
        for key in (
            "reward/format",
            "reward/iou",
            "reward/accuracy",
            "reward/zoom",
            "zoom/coarse_frames",
            "zoom/zoomed_share",
            "tokenadv/grounding_token_share",
        ):
            assert key in m, key
        assert m["actor/lr"] == pytest.approx(2e-4), "constant from step 1 (v0.3.2 gives step 1 a learning rate of 0)"
    assert metrics[1]["prompt_length/mean"] != metrics[2]["prompt_length/mean"], "steps 1 and 2 read different rows"
    assert metrics[1]["actor/grad_norm"] > 0, "rewards differ within a group: the update is real"
    assert metrics[2]["actor/kl_loss"] > 1e-6, "the actor moved away from the reference in step 1"
    # step 2's rollout: vLLM sampled with the weights step 1's update gave the actor
    assert metrics[2]["rollout/logprob_gap_max"] < GAP, "vLLM generated with weights other than the actor's"
    assert "val/reward_score" in metrics[2] and "val/zoom_reward" in metrics[2], "validation ran after the last step"


def test_the_resumed_step_2_is_the_straight_run_s_step_2(resumed, straight):
    _, metrics = straight
    assert {k: resumed[2][k] for k in SAME} == pytest.approx({k: metrics[2][k] for k in SAME}, rel=1e-4, abs=1e-7)


def test_each_update_changes_the_actor_and_merge_gives_a_model_zoomzero_eval_runs(demo, resumed):
    """The actor shards of steps 1 (the demo's) and 2 (the resumed launch's) differ from the model before each; the
    demo's ``easyr1 merge`` of step 1 equals its shards; ``zoomzero eval`` runs the merged model in one-stage mode
    too (the demo ran coarse-to-fine)."""
    import torch
    from transformers import AutoModelForImageTextToText

    from zoomzero_plugin.commands.train_demo import TinyRun

    cwd, workdir, _ = demo
    shard = "model_world_size_1_rank_0.pt"
    shards = {step: workdir / "checkpoints" / f"global_step_{step}" / "actor" / shard for step in (1, 2)}
    state = {step: torch.load(path, map_location="cpu", weights_only=False) for step, path in shards.items()}
    state = {k: {name: getattr(t, "_local_tensor", t) for name, t in v.items()} for k, v in state.items()}  # 1 rank
    state[0] = AutoModelForImageTextToText.from_pretrained(workdir / "warm-start").state_dict()
    for before, after in ((0, 1), (1, 2)):
        moved = [k for k in state[before] if not torch.equal(state[before][k], state[after][k])]
        assert any("language_model.layers" in k for k in moved), f"update_actor of step {after} changed no weight"
    merged = AutoModelForImageTextToText.from_pretrained(workdir / "model").state_dict()
    assert set(merged) == set(state[1]) and all(torch.equal(merged[k], v) for k, v in state[1].items())
    out, run = cwd / "eval-one-stage", TinyRun(28)
    exe = str(Path(sys.executable).parent / "zoomzero")
    argv = [exe, "eval", "--benchmark", "rows", "--mode", "one-stage", "--model", str(workdir / "model")]
    argv += ["--data", str(workdir / "data" / "train.jsonl"), "--out", str(out), "--limit", "1", "--no-progress"]
    argv += ["--max-visual-tokens", "256", "--min-frame-pixels", str(run.pixels(4))]
    argv += ["--max-frame-pixels", str(run.pixels(64)), "--prompt", "concise"]
    done = subprocess.run(argv, cwd=cwd, env=subprocess_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 1
    assert json.loads((out / "metrics.json").read_text())
