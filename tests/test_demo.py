import re
import shutil
import subprocess
import sys

from zoomzero_plugin.cli import main


def test_demo_prints_a_table_of_rewards_and_advantages(tmp_path):
    exe = shutil.which("zoomzero") or f"{sys.executable} -m zoomzero_plugin.cli"
    proc = subprocess.run(f"{exe} demo --group-size 4 --seed 3 --workdir {tmp_path}".split(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    rows = [l for l in lines if re.match(r"^\s*\d+\s", l)]
    assert len(rows) == 4
    for row in rows:
        nums = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", row.split("|", 1)[0])[-5:]]
        assert all(0.0 <= v <= 1.0 for v in nums)  # format, iou, acc, zoom, overall
    assert re.search(r"Coarse pass: \d+ frames at [\d.]+ tokens/frame", proc.stdout)
    assert (tmp_path / "tiny-qwen" / "config.json").exists()
    # GRPO advantages of a group sum to ~0
    grpo = [float(r.split("|")[1]) for r in rows]
    assert abs(sum(grpo)) < 1e-3


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
