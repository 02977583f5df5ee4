"""The example scripts run as a new user runs them: explaining what to do without data, and end to end on
the synthetic benchmark with DATA=synthetic."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = [
    "eval_nextgqa.sh",
    "eval_rextime.sh",
    "eval_cgbench.sh",
    "eval_long_video.sh",
    "eval_videozoomer.sh",
    "cpu_eval_demo.sh",
]


def _run(script, cwd, **env):
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        ["bash", str(EXAMPLES / script), *env.pop("args", [])],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, **env},
        timeout=300,
    )


RECORDER = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["ZOOMZERO_ARGV_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def _commands(script, tmp_path, **env):
    """Run ``script`` with a ``zoomzero`` on PATH that only records its arguments; returns (result, argv list)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "argv.jsonl"
    bin_dir.mkdir(exist_ok=True)
    log.unlink(missing_ok=True)
    (bin_dir / "zoomzero").write_text(RECORDER)
    (bin_dir / "zoomzero").chmod(0o755)
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    done = subprocess.run(
        ["bash", str(EXAMPLES / script), *env.pop("args", [])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, "ZOOMZERO_ARGV_LOG": str(log), **env},
        timeout=60,
    )
    return done, [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _eval(benchmark, source, mode, out, *extra, batch="1"):
    return ["eval", "--benchmark", benchmark, *source, "--mode", mode, "--batch-size", batch, "--out", out, *extra]


@pytest.mark.parametrize(
    "script, benchmark, mode, out",
    [
        ("eval_nextgqa.sh", "nextgqa", "one-stage", "runs/eval-nextgqa"),
        ("eval_rextime.sh", "rextime", "one-stage", "runs/eval-rextime"),
        ("eval_cgbench.sh", "cgbench", "coarse-to-fine", "runs/eval-cgbench"),
    ],
)
def test_each_script_runs_the_evaluation_its_header_describes(tmp_path, script, benchmark, mode, out):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("{}\n")
    done, argv = _commands(script, tmp_path, DATA=str(rows), MODEL="ckpt", args=["--limit", "3"])
    assert done.returncode == 0, done.stderr
    assert argv == [_eval(benchmark, ["--model", "ckpt", "--data", str(rows)], mode, out, "--limit", "3")]
    done, argv = _commands(script, tmp_path, DATA="synthetic", MODE="divide-and-conquer", BATCH_SIZE="4", OUT="o")
    assert argv == [_eval(benchmark, ["--demo"], "divide-and-conquer", "o", batch="4")]


def test_long_video_script_runs_every_benchmark_in_both_modes(tmp_path):
    done, argv = _commands("eval_long_video.sh", tmp_path, DATA="synthetic")
    assert done.returncode == 0, done.stderr
    assert argv == [
        _eval(b, ["--demo"], m, f"runs/eval-long/{b}-{m}")
        for b in ("videomme", "mlvu", "lvbench")
        for m in ("coarse-to-fine", "divide-and-conquer")
    ]
    mlvu = tmp_path / "mlvu.jsonl"
    mlvu.write_text("{}\n")
    done, argv = _commands("eval_long_video.sh", tmp_path, MLVU=str(mlvu), MODEL="ckpt")  # only MLVU rows exist
    assert done.returncode == 0 and "skip videomme: no rows at data/eval/videomme.jsonl" in done.stderr
    assert argv == [
        _eval("mlvu", ["--model", "ckpt", "--data", str(mlvu)], m, f"runs/eval-long/mlvu-{m}")
        for m in ("coarse-to-fine", "divide-and-conquer")
    ]


def test_cpu_demo_script_evaluates_both_modes_on_the_same_inputs(tmp_path):
    done, argv = _commands("cpu_eval_demo.sh", tmp_path, args=["--limit", "2"])
    assert done.returncode == 0, done.stderr
    inputs = "runs/cpu-eval-demo/coarse-to-fine/demo-inputs"
    assert argv == [
        ["eval", "--demo", "--mode", "coarse-to-fine", "--out", "runs/cpu-eval-demo/coarse-to-fine", "--limit", "2"],
        [
            "eval",
            "--demo",
            "--model",
            f"{inputs}/tiny-qwen",
            "--data",
            f"{inputs}/synthetic/rows.jsonl",
            "--mode",
            "divide-and-conquer",
            "--out",
            "runs/cpu-eval-demo/divide-and-conquer",
            "--limit",
            "2",
        ],
    ]


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
