import json
import os
import signal
import subprocess
import sys
import time

import pytest

from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.errors import ResumeError, VideoError
from zoomzero_plugin.eval.runner import evaluate, main as eval_main
from zoomzero_plugin.inference.modes import ModeConfig
from zoomzero_plugin.journal import Journal
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.synthetic.benchmark import make_benchmark

from .conftest import SMALL

CFG = ModeConfig(budget=SMALL, max_new_tokens=16, window_seconds=4.0)
SMALL_FLAGS = ["--max-visual-tokens", "64", "--min-frame-pixels", str(4 * 28 * 28), "--no-progress"]


class Counting:
    """The real backend, counting the requests it serves."""

    def __init__(self, inner):
        self.inner, self.name, self.geometry, self.requests = inner, "counting", inner.geometry, 0

    def generate(self, requests, params):
        self.requests += len(requests)
        return self.inner.generate(requests, params)


def test_eval_writes_predictions_metrics_report_and_plots(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)
    for mode in ("one-stage", "divide-and-conquer"):
        out = tmp_path / mode
        metrics = evaluate(tiny_backend, rows, out, benchmark="rows", mode=mode, cfg=CFG, batch_size=2, progress=False)
        records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
        assert [r["qid"] for r in records] == [json.loads(r["answer"])["qid"] for r in rows]
        assert all({"qid", "answer", "spans", "confidence", "mode", "passes"} <= set(r) for r in records)
        assert [json.loads(line)["qid"] for line in (out / "timings.jsonl").read_text().splitlines()] == [
            r["qid"] for r in records
        ]
        assert metrics["questions"] == len(rows) == metrics["predicted"]
        assert json.loads((out / "metrics.json").read_text())["metrics"] == metrics
        report = (out / "report.md").read_text()
        assert "| Acc | mIoU |" in report
        for png in ("iou_distribution.png", "miou_by_clue_duration.png", "accuracy_by_video_length.png"):
            assert (out / png).stat().st_size > 1000 and f"]({png})" in report


def test_a_finished_question_is_never_asked_again(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)
    backend = Counting(tiny_backend)
    evaluate(backend, rows[:2], tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    assert backend.requests == 2
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    assert backend.requests == 4  # only the two new questions
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    assert backend.requests == 4
    qids = [json.loads(line)["qid"] for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert len(qids) == len(set(qids)) == 4
    with pytest.raises(ResumeError, match=r"other settings: --mode \('one-stage' there, 'coarse-to-fine' now\)"):
        evaluate(backend, rows, tmp_path, benchmark="rows", mode="coarse-to-fine", cfg=CFG, progress=False)
    with pytest.raises(ResumeError, match="not in the data"):
        evaluate(backend, rows[2:], tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)


def test_killed_run_resumes_to_the_same_predictions(tiny_model_dir, tmp_path):
    rows = make_benchmark(tmp_path / "bench", n_videos=6, seed=5)
    args = [
        "--benchmark",
        "rows",
        "--model",
        str(tiny_model_dir),
        "--data",
        str(rows),
        "--mode",
        "coarse-to-fine",
        "--max-new-tokens",
        "48",
        *SMALL_FLAGS,
    ]
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    proc = subprocess.Popen(
        [sys.executable, "-m", "zoomzero_plugin.eval.runner", *args, "--out", str(killed)],
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    predictions = killed / "predictions.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not predictions.exists() or predictions.read_text().count("\n") < 2):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = predictions.read_text().count("\n")
    assert 2 <= written < 6, "the run was not stopped midway"
    with predictions.open("a") as f:
        f.write('{"qid": "synth00')  # a line cut short, as a kill during the write leaves it
    assert eval_main([*args, "--out", str(killed)]) == 0
    assert eval_main([*args, "--out", str(whole)]) == 0
    assert predictions.read_bytes() == (whole / "predictions.jsonl").read_bytes()
    assert (killed / "metrics.json").read_text() != "" and (killed / "report.md").exists()


def test_journal_recovers_from_a_torn_write(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append([{"qid": "a", "x": 1}, {"qid": "b"}])
    with pytest.raises(ValueError, match="already"):
        journal.append([{"qid": "a"}])
    with pytest.raises(ValueError, match="already"):
        journal.append([{"qid": "c"}, {"qid": "c"}])
    with path.open("a") as f:
        f.write('{"qid": "c", "x"')
    assert [r["qid"] for r in Journal(path).records] == ["a", "b"]
    assert path.read_text().endswith('{"qid": "b"}\n')
    with path.open("a") as f:
        f.write('{"qid": "c"}')  # complete, only the newline was lost
    again = Journal(path)
    assert again.done == {"a", "b", "c"} and path.read_text().endswith('{"qid": "c"}\n')
    path.write_text('{"qid": "a"}\nnot json\n{"qid": "b"}\n')
    with pytest.raises(ResumeError, match=":2: not JSON.*--repair"):
        Journal(path)


def test_cli_registers_eval_and_explains_its_flags(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        zoomzero(["eval", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in (
        "--benchmark",
        "--mode",
        "--window-seconds",
        "--top-k",
        "--max-fine-passes",
        "--max-visual-tokens",
        "--demo",
        "(default: 256.0)",
        "(default: 4)",
        "--prompt {paper,concise}",
        "(default: 8192 (short videos) or 16384 (long videos), by --benchmark)",
    ):
        assert flag in text
    assert zoomzero(["eval", "--benchmark", "rows", "--out", str(tmp_path)]) == 2
    assert "zoomzero eval: --model, --data required" in capsys.readouterr().err
    assert (
        zoomzero(
            ["eval", "--benchmark", "rows", "--model", "m", "--data", str(tmp_path / "x.jsonl"), "--out", str(tmp_path)]
        )
        == 2
    )
    assert "--data " + str(tmp_path / "x.jsonl") + ": no such file" in capsys.readouterr().err


def test_a_broken_video_stops_the_run_or_is_recorded(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)[:3]
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42 not really a video")
    rows[1] = {**rows[1], "videos": [str(broken)]}
    qid = json.loads(rows[1]["answer"])["qid"]
    with pytest.raises(VideoError, match=f"question {qid}: {broken}: cannot decode it .*decord"):
        evaluate(tiny_backend, rows, tmp_path / "stop", benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    assert len((tmp_path / "stop" / "predictions.jsonl").read_text().splitlines()) == 1  # the first is kept
    metrics = evaluate(
        tiny_backend,
        rows,
        tmp_path / "skip",
        benchmark="rows",
        mode="coarse-to-fine",
        cfg=CFG,
        batch_size=3,
        progress=False,
        skip_errors=True,
    )
    records = [json.loads(line) for line in (tmp_path / "skip" / "predictions.jsonl").read_text().splitlines()]
    assert [("error" in r) for r in records] == [False, True, False] and records[1]["answer"] is None
    assert metrics["predicted"] == 3 and records[0]["passes"]


def test_eval_on_hidden_labels_writes_predictions_but_no_metrics(tiny_backend, bench_rows, tmp_path):
    """A test split (ReXTime test: labels only on the server) is predicted; its placeholder answers are never scored."""
    rows = read_rows(bench_rows)[:2]
    for row in rows:
        truth = json.loads(row["answer"])
        row["answer"] = json.dumps({**truth, "label_hidden": True})
    metrics = evaluate(
        tiny_backend, rows, tmp_path / "run", benchmark="rextime", mode="one-stage", cfg=CFG, progress=False
    )
    assert metrics == {"labels_hidden": 2}
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 2
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_budget_defaults_are_the_papers_for_the_benchmark():
    import argparse

    from zoomzero_plugin.eval.runner import add_arguments
    from zoomzero_plugin.inference.options import mode_config, resolve

    parser = argparse.ArgumentParser()
    add_arguments(parser)

    def values(*argv):
        args = parser.parse_args(["--out", "x", *argv])
        return resolve(args, benchmark=args.benchmark)

    assert (
        values("--benchmark", "lvbench")["max_visual_tokens"] == 16384
        and values("--benchmark", "mlvu")["max_frames"] == 256
    )
    assert values("--benchmark", "nextgqa")["max_visual_tokens"] == 8192
    assert values("--benchmark", "rextime")["fps"] == 1.0
    assert values("--benchmark", "videomme", "--max-visual-tokens", "4096")["max_visual_tokens"] == 4096  # a flag wins
    cfg = mode_config(values("--benchmark", "cgbench"))
    assert cfg.budget.max_visual_tokens == 16384 and cfg.prompt == "paper"
    assert mode_config(values("--benchmark", "rows", "--prompt", "concise")).prompt == "concise"


def test_no_tool_takes_the_authors_no_tool_budget_unless_a_flag_is_given(capsys, tmp_path):
    import argparse

    from zoomzero_plugin.eval.runner import add_arguments
    from zoomzero_plugin.inference.options import mode_config, resolve

    parser = argparse.ArgumentParser()
    add_arguments(parser)

    def agent(*argv):
        return mode_config(resolve(parser.parse_args(["--out", "x", "--mode", "agent", *argv]))).agent

    plain, baseline = agent(), agent("--no-tool")
    assert plain.tool and plain.budget.overview_fps == 0.5 and plain.budget.max_assistant_turns == 5
    assert not baseline.tool and (baseline.budget.overview_fps, baseline.budget.max_overview_frames) == (0.2, 120)
    assert (baseline.budget.min_frame_pixels, baseline.budget.max_new_tokens) == (12544, 2048)
    assert agent("--no-tool", "--agent-max-overview-frames", "32").budget.max_overview_frames == 32  # a flag wins
    common = [
        "eval",
        "--benchmark",
        "rows",
        "--model",
        "m",
        "--data",
        str(tmp_path / "d.jsonl"),
        "--out",
        str(tmp_path),
    ]
    assert zoomzero([*common, "--no-tool"]) == 2
    assert "--no-tool is VideoZoomer's baseline without its tool: use it with --mode agent" in capsys.readouterr().err
    assert zoomzero([*common, "--mode", "agent", "--no-tool", "--agent-prompt", "train"]) == 2
    assert "drop --agent-prompt" in capsys.readouterr().err
