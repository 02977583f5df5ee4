import re
import shutil
import subprocess
import sys

import pytest

from zoomzero_plugin.cli import main

from .helpers import iou_oracle


def _normalise(values):
    """DESIGN's group normalisation: (r − mean) / (population std + 1e-6); a constant group gives 0."""
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return [0.0 if max(values) == min(values) else (v - mean) / (std + 1e-6) for v in values]


ROW = re.compile(r"^\s*(\d+)\s+(\[.*?\]|invalid \(\d+\))\s+([A-Z-])\s+(.*?)\s+([\d.]+)\s+([\d.]+)\s+(\d)\s+(\d)\s+([\d.]+)"
                 r" \|\s+(\S+) \|\s+(\S+)\s+(\S+)$")


def test_demo_prints_a_table_of_rewards_and_advantages(tmp_path):
    """Every number of the table recomputed from its printed spans and letters by the definitions in DESIGN:
    iou by elementary segments, overall = mean of 4 components, GRPO and TokenAdv with population std."""
    exe = shutil.which("zoomzero") or f"{sys.executable} -m zoomzero_plugin.cli"
    proc = subprocess.run(f"{exe} demo --group-size 4 --seed 3 --workdir {tmp_path}".split(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"Coarse pass: \d+ frames at [\d.]+ tokens/frame", proc.stdout)
    assert (tmp_path / "tiny-qwen" / "config.json").exists()
    truth = re.search(r"Truth: \(([A-Z])\), evidence at \[\(([\d.]+), ([\d.]+)\)\] of a (\d+) s video", proc.stdout)
    letter, gt, duration = truth.group(1), [(float(truth.group(2)), float(truth.group(3)))], float(truth.group(4))
    rows = [ROW.match(line) for line in proc.stdout.splitlines() if re.match(r"^\s*\d+\s", line)]
    assert len(rows) == 4 and all(rows), proc.stdout
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
    overall = [sum(c[i] for c in comps.values()) / 4 for i in range(4)]
    assert [float(r.group(10)) for r in rows] == pytest.approx(_normalise(overall), abs=2e-3)
    adv = {k: _normalise(v) for k, v in comps.items()}
    glue = [(adv["format"][i] + adv["zoom"][i] + adv["iou"][i]) / 3 for i in range(4)]
    other = [(adv["format"][i] + adv["zoom"][i] + adv["accuracy"][i]) / 3 for i in range(4)]
    for r, g, o in zip(rows, glue, other):
        if r.group(11) != "nan":  # a response with no glue tokens has no glue advantage to show
            assert float(r.group(11)) == pytest.approx(g, abs=2e-3)
        assert float(r.group(12)) == pytest.approx(o, abs=2e-3)


def test_demo_rejects_a_group_of_one(capsys):
    assert main(["demo", "--group-size", "1"]) == 2
    assert "at least 2" in capsys.readouterr().err


def test_demo_eval_writes_a_full_evaluation(tmp_path, capsys):
    assert main(["demo", "--group-size", "2", "--eval", "--workdir", str(tmp_path)]) == 0
    out = tmp_path / "eval"
    names = {p.name for p in out.iterdir()}
    assert {"predictions.jsonl", "metrics.json", "report.md", "iou_distribution.png"} <= names
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 8  # one line per synthetic question
    assert "Files:" in capsys.readouterr().out


def test_demo_agent_runs_the_tool_loop(tmp_path, capsys):
    assert main(["demo", "--agent", "--seed", "1", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Overview: 30 frames at 0.5 fps, 0.00 s … 58.00 s", out)  # 60 s at 2 fps: every 4th frame
    assert "-> error (too_many_frames): Number of frames extracted (" in out
    assert re.search(r"-> clip: (\d+\.\d\d s \[[-a-z]+\](, )?)+\n", out)
    assert re.search(r"Turn 3 \(\d+ tokens\): <think>.*</think><answer>[ABCD]</answer>", out)
    assert "Budgets used: rounds 3/5, calls 1/4, error turns 1" in out
    assert re.search(r"Reward: accuracy [01], format 0, tool [01] -> overall", out)
