"""benchmarks/gpu: the GPU check run with ``--tiny`` on the CPU (so it cannot rot between GPU loans), and the check
that what a GPU run carries fits the device tool's 64 MiB.

The expected numbers are worked out here from the tiny workload (benchmarks/gpu/workload.py ``TINY``): 20-s videos
with a 2-s clue, L_v = 128 visual tokens at 1 fps, 8-s windows, the paper's 8..384 tokens per frame, the agent's
default budget with 2-s calls of 16 frames, a training coarse pass at L_v = 256 and 32 response tokens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu" / "run.py"
MODES = ("one-stage", "coarse-to-fine", "divide-and-conquer")


def _run(out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--tiny", "--out", str(out), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("gpu-tiny")
    proc = _run(out)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads((out / "gpu_benchmark.json").read_text())
    result["_markdown"] = (out / "gpu_benchmark.md").read_text()
    return result


def test_structure(tiny):
    assert tiny["tiny"] is True and tiny["errors"] == [] and tiny["skipped"] == []
    assert tiny["machine"]["device"] == "cpu" and tiny["machine"]["memory_gib"] is None
    assert list(tiny["models"]) == ["tiny Qwen2.5-VL", "tiny Qwen3-VL"]
    for entry in tiny["models"].values():
        assert set(entry) == {"build", "eval", "agent", "train"}
        assert tuple(entry["eval"]["modes"]) == MODES
        assert entry["build"]["parameters"] > 0 and entry["build"]["dtype"] == "float32"
    assert [m["family"] for m in tiny["workload"]["models"]] == ["qwen2_5_vl", "qwen3_vl"]


def test_planned_tokens_per_mode(tiny):
    # one-stage: N = min(20 s x 1 fps, 128 / 8, 256) = 16 frames at max(8, min(128 / 16, 384)) = 8 tokens -> 128.
    # coarse-to-fine: + the fine pass on the 2-s clue: 2 frames at min(128 / 2, 384) = 64 tokens -> 128 more.
    # divide-and-conquer: windows 0-8, 8-16, 16-20 s: 8 frames x 16, 8 x 16, 4 x 32 tokens (128 each), + the fine pass.
    expected = {"one-stage": (1, 16, 128), "coarse-to-fine": (2, 18, 256), "divide-and-conquer": (4, 22, 512)}
    for label, entry in tiny["models"].items():
        for mode, (passes, frames, tokens) in expected.items():
            got = entry["eval"]["modes"][mode]
            assert (got["passes"], got["planned_frames"], got["planned_video_tokens"]) == (passes, frames, tokens), (
                label,
                mode,
            )
            assert got["frames"] == frames  # every planned frame was decoded
            assert got["video_tokens"] > 0


def test_ratios_are_the_reported_seconds(tiny):
    for entry in tiny["models"].values():
        modes = entry["eval"]["modes"]
        base = modes["one-stage"]["seconds_per_question"]
        assert modes["one-stage"]["x_one_stage"] == 1.0
        for mode in MODES:
            got = modes[mode]
            assert got["seconds_per_question"] > 0
            assert abs(got["x_one_stage"] - got["seconds_per_question"] / base) <= 0.0005
    adv = tiny["advantages"]
    assert adv["shape"] == [16, 64]
    assert abs(adv["tokenadv_over_grpo"] - adv["tokenadv_ms"] / adv["grpo_ms"]) <= 0.005


def test_agent_uses_its_whole_budget(tiny):
    # overview: a 20-s video at 8 fps, every round(8 / 0.5) = 16th frame -> 10 frames; 4 calls x 16 frames -> 74.
    for entry in tiny["models"].values():
        agent = entry["agent"]
        assert (agent["frames"], agent["calls"], agent["turns"], agent["errors"], agent["answered"]) == (74, 4, 5, 0, 1)
        assert agent["last_prompt_tokens"] > 74  # every image's tokens are in the last turn's prompt


def test_training_sequences(tiny):
    for entry in tiny["models"].values():
        zz, vz = entry["train"]["zoomzero"], entry["train"]["videozoomer"]
        # the coarse pass at L_v = 256: min(20, 256 / 8) = 20 frames at 256 / 20 = 12.8 tokens each
        assert (zz["frames"], zz["planned_visual_tokens"], zz["response_tokens"]) == (20, 256, 32)
        assert zz["tokens"] > zz["visual_tokens"] + zz["response_tokens"]
        assert (vz["frames"], vz["calls"], vz["turns"]) == (74, 4, 5)
        assert vz["tokens"] == vz["prompt_tokens"] + vz["response_tokens"] and vz["visual_tokens"] > 0
        for seq in (zz, vz):
            for key in ("checkpointing", "no_checkpointing"):
                assert seq[key]["status"] == "ok" and seq[key]["seconds"] > 0 and seq[key]["runs"] == 1


def test_markdown_table(tiny):
    lines = tiny["_markdown"].splitlines()
    assert lines[0].startswith("GPU benchmark, ") and "CPU" in lines[0] and "--tiny" in lines[0]
    assert lines[2] == "| model | measurement | time | × one-stage | peak GiB | notes |"
    rows = [line for line in lines if line.startswith("| tiny")]
    assert len(rows) == 2 * (1 + 3 + 1 + 4)  # per model: build, 3 modes, agent, 2 sequences x 2 settings
    assert sum("TokenAdv vs GRPO" in line for line in lines) == 1


def test_sections_past_the_budget_are_listed_not_lost(tmp_path):
    proc = _run(tmp_path, "--budget-s", "0")
    assert proc.returncode == 2, proc.stderr[-2000:]
    result = json.loads((tmp_path / "gpu_benchmark.json").read_text())
    assert result["advantages"] is None and result["errors"] == []
    assert [s.split(" (")[0] for s in result["skipped"]] == [
        "advantages",
        "tiny Qwen2.5-VL: build",
        "tiny Qwen3-VL: build",
    ]
    assert "skipped: advantages" in (tmp_path / "gpu_benchmark.md").read_text()


def test_carry_check_arithmetic(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks" / "gpu"))
    import carry

    def files(folder: str, mib: list[float]) -> list[Path]:
        (tmp_path / folder).mkdir()
        out = []
        for i, size in enumerate(mib):
            path = tmp_path / folder / f"f{i}.whl"
            path.write_bytes(b"\0" * int(size * 2**20))
            out.append(path)
        return out

    tree, wheels = files("tree", [1, 1.5]), files("wheels", [30, 31.5])
    fits, lines = carry.check(tree, {"wheels": wheels})  # 2.5 + 61.5 = 64 MiB: exactly the limit
    assert fits and lines[-1] == "total 64.00 MiB of 64 MiB: fits"
    over = files("more", [0.01])
    fits, lines = carry.check(tree, {"wheels": wheels, "more": over})
    assert not fits and lines[-1] == "total 64.01 MiB of 64 MiB: OVER THE LIMIT"
    assert carry.missing_wheels(tmp_path / "wheels") == [name for name, _, _ in carry.PINNED] + ["zoomzero-plugin"]


def test_run_header_lists_every_carried_wheel(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks" / "gpu"))
    import carry

    header = SCRIPT.read_text().split('"""')[1]
    for name, version, _ in carry.PINNED:
        assert f"{name.replace('-', '_')}-{version}" in header
    assert "zoomzero_plugin-0.1.0" in header and "64 MiB" in header
