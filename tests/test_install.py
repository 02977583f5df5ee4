"""The venv made by scripts/install-cpu.sh is sound for ANY code: a fresh interpreter imports torchvision (and with it
transformers' processors) without this package's code running first, and start-up stays light."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from zoomzero_plugin.cpu_compat import PTH_LINE, pth_path

REPO = Path(__file__).resolve().parents[1]


def fresh(code: str) -> subprocess.CompletedProcess:
    """A new interpreter of this venv, run outside the clone, with nothing of ours on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", timeout=180)


def test_the_install_script_left_its_start_up_hook_in_the_venv():
    assert pth_path().read_text(encoding="utf-8") == PTH_LINE


def test_any_process_of_the_venv_imports_torchvision_and_the_qwen_processors():
    done = fresh(
        "import importlib.util; import torchvision.transforms;"
        "from transformers import AutoProcessor, Qwen2VLImageProcessorFast; from qwen_vl_utils import fetch_video;"
        "importlib.util.find_spec('torchaudio') and __import__('torchaudio'); print('ok')"
    )  # LLaMA-Factory's
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_start_up_imports_nothing_heavy():
    done = fresh("import sys; print(sorted(m for m in ('torch', 'torchvision', 'transformers') if m in sys.modules))")
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_the_install_script_names_a_wrong_option_before_installing_anything():
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "install-cpu.sh"), "--tset"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stderr.startswith("install-cpu.sh: unknown option '--tset'")
    assert "--test" in done.stderr  # the usage follows
