"""benchmarks/learning_curve_videozoomer.py reuses a seed's warm start (OUT/models/agent-SEED-fN) only when it was made
with the settings asked now: a warm start of other settings would silently train another curve."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "learning_curve_videozoomer.py"


@pytest.fixture
def curve():
    sys.path.insert(0, str(SCRIPT.parent))  # its sibling learning_curve.py
    try:
        spec = importlib.util.spec_from_file_location("learning_curve_videozoomer", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(SCRIPT.parent))


def made(tmp_path: Path, record: dict, frames: int = 4) -> Path:
    for name in ("train", "val", "probe"):  # the task's rows, as if made before (prepare makes none then)
        (tmp_path / "data").mkdir(exist_ok=True)
        (tmp_path / "data" / f"{name}.jsonl").write_text("")
    (tmp_path / "models" / "base").mkdir(parents=True)
    (tmp_path / "models" / "base" / "config.json").write_text("{}")
    agent = tmp_path / "models" / f"agent-7-f{frames}"
    agent.mkdir()
    (agent / "probe.json").write_text(json.dumps({"warm_start_s": 1.0, "lines": ["probed"], **record}))
    return agent


def test_a_warm_start_of_other_settings_is_refused(curve, tmp_path):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1", "--frames-per-call", "4"])
    settings = {k: getattr(args, k) for k in curve.WARM_START_ARGS}
    agent = made(tmp_path, {"made_with": {**settings, "seen_answers": 3}})
    with pytest.raises(SystemExit, match=rf"{agent}: a warm start made with other settings .*move it aside"):
        curve.prepare(tmp_path, args)


def test_a_warm_start_from_before_the_settings_were_recorded_is_refused(curve, tmp_path):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1"])
    made(tmp_path, {})
    with pytest.raises(SystemExit, match="or before the script recorded them"):
        curve.prepare(tmp_path, args)


def test_the_frames_a_call_may_ask_default_to_16_for_the_check_and_4_for_the_curve(curve):
    assert curve.parse_args(["--check"]).frames_per_call == 16
    assert curve.parse_args([]).frames_per_call == 4
    assert curve.parse_args(["--check", "--frames-per-call", "8"]).frames_per_call == 8


def test_a_warm_start_of_the_same_settings_is_reused(curve, tmp_path, capsys):
    args = curve.parse_args(["--out", str(tmp_path), "--first-seed", "7", "--seeds", "1"])
    agent = made(tmp_path, {"made_with": {k: getattr(args, k) for k in curve.WARM_START_ARGS}})
    prepared = curve.prepare(tmp_path, args)
    assert prepared["models"] == {7: agent} and "probed" in capsys.readouterr().out
