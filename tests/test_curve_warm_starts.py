"""The learning-curve scripts (benchmarks/learning_curve.py, benchmarks/learning_curve_videozoomer.py) reuse their
data, warm starts and finished runs only when made with the settings asked now: one made otherwise would silently
train, or report, another curve. The settings are recorded in ``made_with.json`` in each folder, written last for
the data and warm starts (a folder without it is unfinished) and first for a run (finished is read on its metrics).
And the plot's title counts every update of a step."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCHMARKS))  # the VideoZoomer script imports its sibling learning_curve.py
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture
def curve():
    return load("learning_curve_videozoomer")


@pytest.fixture
def lc():
    return load("learning_curve")


def made(tmp_path: Path, warm: dict | None, frames: int = 4, task: dict | None = None) -> Path:
    """OUT as a finished earlier call left it: the task's rows made for ``task`` (the defaults: middle, 32 videos),
    the base model, and seed 7's warm start made with ``warm`` (None: no record, as before the scripts kept one)."""
    data = tmp_path / "data"
    data.mkdir()
    for name in ("train", "val", "probe"):
        (data / f"{name}.jsonl").write_text("")
    (data / "made_with.json").write_text(json.dumps(task or {"task": "middle", "videos": 32}))
    (tmp_path / "models" / "base").mkdir(parents=True)
    (tmp_path / "models" / "base" / "config.json").write_text("{}")
    agent = tmp_path / "models" / f"agent-7-f{frames}"
    agent.mkdir()
    (agent / "probe.json").write_text(json.dumps({"warm_start_s": 1.0, "lines": ["probed"]}))
    if warm is not None:
        (agent / "made_with.json").write_text(json.dumps(warm))
    return agent


def settings(curve, args) -> dict:
    return {k: getattr(args, k) for k in curve.WARM_START_ARGS}


def test_a_folder_is_made_once_then_reused_only_with_the_same_settings(lc, tmp_path):
    folder = tmp_path / "data"
    assert lc.made_before(folder, {"videos": 32}, "the task's rows") is False  # absent: make it
    folder.mkdir()
    assert lc.made_before(folder, {"videos": 32}, "the task's rows") is False  # empty: make it
    (folder / "train.jsonl").write_text("")
    lc.record_made_with(folder, {"videos": 32})
    assert lc.made_before(folder, {"videos": 32}, "the task's rows") is True
    refused = rf"^{folder}: the task's rows made with {{'videos': 32}}, not {{'videos': 24}}"
    with pytest.raises(SystemExit, match=refused):
        lc.made_before(folder, {"videos": 24}, "the task's rows")


def test_a_folder_with_files_and_no_record_is_refused_as_unfinished(lc, tmp_path):
    (tmp_path / "warm-0").mkdir()
    (tmp_path / "warm-0" / "config.json").write_text("{}")  # the warm start died before its record was written
    with pytest.raises(SystemExit, match=r"warm-0: seed 0's warm start unfinished or made before .*move it aside"):
        lc.made_before(tmp_path / "warm-0", {"warm_steps": 600}, "seed 0's warm start")


def test_the_task_made_for_other_videos_is_refused_before_any_warm_start(curve, tmp_path):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1", "--videos", "24"])
    agent = made(tmp_path, None)  # the warm start would be refused too: the data's check must come first
    with pytest.raises(SystemExit, match=rf"{tmp_path / 'data'}: the task's rows made with .*'videos': 32"):
        curve.prepare(tmp_path, args)
    assert not (agent / "made_with.json").exists()


def test_a_warm_start_of_other_settings_is_refused(curve, tmp_path):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1", "--frames-per-call", "4"])
    agent = made(tmp_path, {**settings(curve, args), "seen_answers": 3})
    with pytest.raises(SystemExit, match=rf"{agent}: seed 7's warm start made with .*move it aside"):
        curve.prepare(tmp_path, args)


def test_a_warm_start_from_before_the_settings_were_recorded_is_refused(curve, tmp_path):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1"])
    made(tmp_path, None)
    with pytest.raises(SystemExit, match="unfinished or made before the scripts recorded their settings"):
        curve.prepare(tmp_path, args)


def test_the_frames_a_call_may_ask_default_to_16_for_the_check_and_4_for_the_curve(curve):
    assert curve.parse_args(["--check"]).frames_per_call == 16
    assert curve.parse_args([]).frames_per_call == 4
    assert curve.parse_args(["--check", "--frames-per-call", "8"]).frames_per_call == 8


def test_the_warm_start_s_steps_default_to_1600_for_the_check_and_800_for_the_curve(curve, capsys):
    assert curve.parse_args(["--check"]).warm_steps == 1600
    assert curve.parse_args([]).warm_steps == 800
    assert curve.parse_args(["--check", "--warm-steps", "400"]).warm_steps == 400
    with pytest.raises(SystemExit):
        curve.parse_args(["--warm-steps", "0"])
    assert "--warm-steps 0: the warm start needs at least 1 step" in capsys.readouterr().err


def test_a_warm_start_of_the_same_settings_is_reused(curve, tmp_path, capsys):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1"])
    agent = made(tmp_path, settings(curve, args))
    prepared = curve.prepare(tmp_path, args)
    assert prepared["models"] == {7: agent} and "probed" in capsys.readouterr().out


def finished(run: Path, steps: int) -> None:
    run.mkdir(parents=True)
    lines = [{"step": s, "reward/overall": 0.5, **({"actor/pg_loss": 0.1} if s == steps else {})} for s in (1, steps)]
    (run / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_finished_run_is_reused_only_when_made_with_the_same_recipe_and_overrides(lc, tmp_path, monkeypatch):
    monkeypatch.setattr(lc, "run_tied", lambda *a, **k: pytest.fail("a finished run was launched again"))
    recipe, run = Path("yamls/videozoomer.yaml"), tmp_path / "grpo-0"
    finished(run, steps=2)
    with pytest.raises(SystemExit, match=rf"^{run}: a finished run of other settings .*move it aside"):
        lc.launch(recipe, ["worker.actor.optim.lr=3e-4"], run, 2, "grpo seed 0")  # no record: from before
    (run / "made_with.json").write_text(json.dumps({"recipe": "videozoomer.yaml", "overrides": ["x=1"]}))
    with pytest.raises(SystemExit, match="a finished run of other settings"):
        lc.launch(recipe, ["worker.actor.optim.lr=3e-4"], run, 2, "grpo seed 0")
    lc.record_made_with(run, {"recipe": "videozoomer.yaml", "overrides": ["worker.actor.optim.lr=3e-4"]})
    assert sorted(lc.launch(recipe, ["worker.actor.optim.lr=3e-4"], run, 2, "grpo seed 0")) == [1, 2]


def test_an_unfinished_run_is_launched_again_with_its_settings_recorded_first(lc, tmp_path, monkeypatch):
    recipe, run, extra = Path("yamls/videozoomer.yaml"), tmp_path / "grpo-0", ["worker.actor.optim.lr=3e-4"]
    finished(run, steps=2)  # 2 of the 3 steps asked: unfinished
    seen = {}

    def fake_train(command, **popen):  # stands for easyr1 train: what it finds when it starts, and its metrics
        seen["record"] = json.loads((run / "made_with.json").read_text())
        seen["stale metrics"] = (run / "metrics.jsonl").exists()
        (run / "metrics.jsonl").write_text(json.dumps({"step": 3, "actor/pg_loss": 0.2}) + "\n")
        return 0

    monkeypatch.setattr(lc, "run_tied", fake_train)
    assert sorted(lc.launch(recipe, extra, run, 3, "grpo seed 0")) == [3]
    assert seen == {"record": {"recipe": "videozoomer.yaml", "overrides": extra}, "stale metrics": False}


def test_the_plot_title_counts_every_update_of_a_step(curve, monkeypatch, tmp_path):
    args = curve.parse_args(["--prompts", "4", "--update-prompts", "1", "--epochs", "2"])
    seen = {}
    monkeypatch.setattr(curve.lc, "panels", lambda results, keys, steps, labels, title, path: seen.update(title=title))
    curve.plot({}, args, tmp_path / "curve.png")
    assert "2 x 4 updates per step" in seen["title"]  # 2 passes, each 4 prompts / 1 per update: 8 updates
