"""``zoomzero demo --train`` where it cannot train: one line naming the install, before anything is built. (Where it
can, in the vLLM environment: tests/vllm/test_demo_train.py.)"""

import importlib.util

import pytest

from zoomzero_plugin.commands.cli import main
from zoomzero_plugin.errors import EXIT_USER


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here: --train would run")
@pytest.mark.parametrize("extra", [[], ["--model", "qwen3-vl"], ["--agent"], ["--agent", "--model", "qwen3-vl"]])
def test_train_without_the_vllm_environment_refuses_in_one_line_before_any_work(extra, tmp_path, capsys):
    workdir = tmp_path / "demo"
    assert main(["demo", "--train", "--workdir", str(workdir), *extra]) == EXIT_USER
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("zoomzero demo: --train") and "\n" not in err
    assert "bash scripts/install-cpu.sh --vllm" in err and "`zoomzero demo` (no --train) runs anywhere" in err
    assert captured.out == "" and not workdir.exists(), "nothing was built"


def test_steps_must_be_positive(capsys):
    assert main(["demo", "--train", "--steps", "0"]) == EXIT_USER
    assert "--steps must be at least 1" in capsys.readouterr().err
