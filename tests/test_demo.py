import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from zoomzero_plugin.commands.cli import main

from .helpers import iou_oracle


def _normalise(values):
    """DESIGN's group normalisation: (r − mean) / (population std + 1e-6); a constant group gives 0."""
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return [0.0 if max(values) == min(values) else (v - mean) / (std + 1e-6) for v in values]


ROW = re.compile(
    r"^\s*(\d+)\s+(\[.*?\]|invalid \(\d+\))\s+([A-Z-])\s+(.*?)\s+([\d.]+)\s+([\d.]+)\s+(\d)\s+(\d)\s+([\d.]+)"
    r" \|\s+(\S+) \|\s+(\S+)\s+(\S+)$"
)


README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_demo_prints_what_the_readme_shows(tmp_path):
    """`zoomzero demo` exactly as the README runs it, from an empty folder: its table is the README's, no
    third-party chatter, nothing left behind, and every number of the table recomputed from its printed spans
    and letters by the definitions in DESIGN: iou by elementary segments, overall = mean of 4 components, GRPO
    and TokenAdv with population std."""
    exe = shutil.which("zoomzero") or f"{sys.executable} -m zoomzero_plugin.commands.cli"
    proc = subprocess.run(f"{exe} demo".split(), capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for noise in ("qwen-vl-utils using", "fast processor", "slow image processor"):  # third-party chatter, silenced
        assert noise not in proc.stderr
    shown = README.read_text().split("### What the demo shows", 1)[1].split("```")[1].strip().splitlines()
    printed = proc.stdout.splitlines()
    assert shown[0] in printed and printed[printed.index(shown[0]) : printed.index(shown[0]) + len(shown)] == shown
    assert list(tmp_path.iterdir()) == []  # without --workdir, nothing is left behind
    assert re.search(r"Coarse pass: \d+ frames at [\d.]+ tokens/frame", proc.stdout)
    truth = re.search(r"Truth: \(([A-Z])\), evidence at \[\(([\d.]+), ([\d.]+)\)\] of a (\d+) s video", proc.stdout)
    letter, gt, duration = truth.group(1), [(float(truth.group(2)), float(truth.group(3)))], float(truth.group(4))
    rows = [ROW.match(line) for line in proc.stdout.splitlines() if re.match(r"^\s*\d+\s", line)]
    n = len(rows)
    assert n == 6 and all(rows), proc.stdout  # the default group
    comps = {"format": [], "iou": [], "accuracy": [], "zoom": []}
    for r in rows:
        spans = [tuple(map(float, p)) for p in re.findall(r"\(([\d.]+), ([\d.]+)\)", r.group(2))]
        zoom_answer = r.group(4).rsplit("-> ", 1)[-1] if "->" in r.group(4) else None
        fmt, iou_ = float(r.group(5)), float(r.group(6))
        if not r.group(2).startswith("invalid"):
            assert fmt == float(bool(spans)) and iou_ == pytest.approx(iou_oracle(spans, gt, duration), abs=0.005)
            iou_ = iou_oracle(spans, gt, duration)
        acc, zoom = float(r.group(3) == letter), float(zoom_answer == letter)
        assert (float(r.group(7)), float(r.group(8))) == (acc, zoom)
        assert float(r.group(9)) == pytest.approx((fmt + iou_ + acc + zoom) / 4, abs=6e-4)  # printed to 3 decimals
        for k, v in zip(comps, (fmt, iou_, acc, zoom)):
            comps[k].append(v)
    overall = [sum(c[i] for c in comps.values()) / 4 for i in range(n)]
    assert [float(r.group(10)) for r in rows] == pytest.approx(_normalise(overall), abs=2e-3)
    adv = {k: _normalise(v) for k, v in comps.items()}
    glue = [(adv["format"][i] + adv["zoom"][i] + adv["iou"][i]) / 3 for i in range(n)]
    other = [(adv["format"][i] + adv["zoom"][i] + adv["accuracy"][i]) / 3 for i in range(n)]
    for r, g, o in zip(rows, glue, other):
        if r.group(11) != "nan":  # a response with no glue tokens has no glue advantage to show
            assert float(r.group(11)) == pytest.approx(g, abs=2e-3)
        assert float(r.group(12)) == pytest.approx(o, abs=2e-3)


def test_demo_rejects_a_group_of_one(capsys):
    assert main(["demo", "--group-size", "1"]) == 2
    assert "at least 2" in capsys.readouterr().err


def test_demo_eval_writes_a_full_evaluation_and_keeps_what_it_prints(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no --workdir: the evaluation is kept in ./zoomzero-demo
    assert main(["demo", "--group-size", "2", "--eval"]) == 0
    out = tmp_path / "zoomzero-demo" / "eval"
    names = {p.name for p in out.iterdir()}
    assert {"predictions.jsonl", "metrics.json", "report.md", "iou_distribution.png"} <= names
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 8  # one line per synthetic question
    printed = capsys.readouterr().out
    assert "Files:" in printed
    paths = re.findall(r"^(?:predictions|report|metrics):\s+(\S+)$", printed, flags=re.M)
    assert len(paths) == 3 and all((tmp_path / p).exists() for p in paths), paths  # every path it names exists


def test_demo_agent_runs_the_tool_loop(tmp_path, capsys):
    assert main(["demo", "--agent", "--seed", "1", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Overview: 30 frames at 0.5 fps, 0.00 s … 58.00 s", out)  # 60 s at 2 fps: every 4th frame
    assert "-> error (too_many_frames): Number of frames extracted (" in out
    assert re.search(r"-> clip: (\d+\.\d\d s \[[-a-z]+\](, )?)+\n", out)
    assert re.search(r"Turn 3 \(\d+ tokens\): <think>.*</think><answer>[ABCD]</answer>", out)
    assert "Budgets used: turns 3/5, calls 1/4, error turns 1" in out
    assert re.search(r"Reward: accuracy [01], format 0, tool [01] -> overall", out)


def test_demo_on_the_tiny_qwen3_vl_plans_and_evaluates_in_its_32_px_tokens(tmp_path, capsys):
    """``zoomzero demo --model qwen3-vl --eval``: the rollout demo and the evaluation both run the tiny Qwen3-VL.
    The demo's budget is in tokens (96 visual tokens at 2 fps over 12 s, 2..384 tokens a frame): N = min(24, 48) =
    24 frames at 96 / 24 = 4 tokens each, on either family. The evaluation's coarse pass (L_v = 128, 1 fps) reads
    12 frames at 128 / 12 tokens: int(128 / 12 · 32² · 2) = 21,845 px on Qwen3-VL (Qwen2.5-VL: 16,725 px)."""
    import json

    assert main(["demo", "--model", "qwen3-vl", "--group-size", "2", "--eval", "--workdir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "Coarse pass: 24 frames at 4.0 tokens/frame (budget 96 visual tokens)" in printed
    assert json.loads((tmp_path / "tiny-qwen" / "config.json").read_text())["model_type"] == "qwen3_vl"
    run = json.loads((tmp_path / "eval" / "run.json").read_text())
    assert run["model"] == str(tmp_path / "tiny-qwen")
    records = [json.loads(line) for line in (tmp_path / "eval" / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 8 and {(r["passes"][0]["frames"], r["passes"][0]["frame_pixels"]) for r in records} == {
        (12, 21845)
    }
