"""Shared fixtures: tiny random Qwen2.5-VL and Qwen3-VL models built offline, synthetic mp4s with known evidence.

``--easyr1 main`` runs the session on EasyR1 main installed in ``.easyr1-main/`` (``bash scripts/install-cpu.sh
--easyr1-main``) instead of the environment's EasyR1 (v0.3.2): the folder goes first on ``sys.path`` and on the
``PYTHONPATH`` every subprocess inherits (the ``easyr1`` launches, Ray's workers). CI runs the train and rollout
tests (tests/vllm) once on each.
"""

import importlib.util
import os
import sys
from pathlib import Path

# Before anything imports torch, torchvision, qwen-vl-utils or datasets.
os.environ.setdefault("OMP_NUM_THREADS", "1")  # forked dataset workers hang in libgomp otherwise
os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable  # noqa: E402

ensure_torchvision_importable()

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

EASYR1_MAIN_DIR = Path(__file__).resolve().parents[1] / ".easyr1-main"  # where install-cpu.sh --easyr1-main puts it


def pytest_addoption(parser):
    parser.addoption(
        "--easyr1",
        choices=("installed", "main"),
        default="installed",
        help="the EasyR1 the tests run on: the environment's (default) or EasyR1 main from .easyr1-main/ "
        "(bash scripts/install-cpu.sh --easyr1-main), first on sys.path and PYTHONPATH",
    )


def pytest_configure(config):
    if config.getoption("--easyr1") != "main":
        return
    if not (EASYR1_MAIN_DIR / "verl" / "__init__.py").is_file():
        raise pytest.UsageError(
            f"--easyr1 main: no EasyR1 in {EASYR1_MAIN_DIR}; install it with bash scripts/install-cpu.sh --easyr1-main"
        )
    loaded = sys.modules.get("verl")
    if loaded is not None and not str(loaded.__file__).startswith(str(EASYR1_MAIN_DIR)):
        raise pytest.UsageError(f"--easyr1 main: EasyR1 was imported from {loaded.__file__} before the option applied")
    sys.path.insert(0, str(EASYR1_MAIN_DIR))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(EASYR1_MAIN_DIR), *paths])
    importlib.invalidate_caches()


def pytest_report_header(config):
    spec = importlib.util.find_spec("verl")
    if spec is None or spec.origin is None:
        return "EasyR1: not installed"
    import verl  # light: its version (the distribution is lazyllm-verl for v0.3.2, verl for main)

    return f"EasyR1 {verl.__version__} ({Path(spec.origin).parent}; --easyr1 {config.getoption('--easyr1')})"


# Speed targets live in benchmarks/, not in tests: no per-example deadline on a shared 2-core machine.
settings.register_profile("zoomzero", deadline=None)
settings.load_profile("zoomzero")

from zoomzero_plugin.synthetic.videos import Evidence, write_video  # noqa: E402

# The evidence video: 12 s at 4 fps, 224x168; a red square from 3 s to 5 s, a blue one from 8 s to 9.5 s.
EVIDENCE = (Evidence(3.0, 5.0, "red"), Evidence(8.0, 9.5, "blue"))
EVIDENCE_DURATION = 12.0


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    return build_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen"))


@pytest.fixture(scope="session")
def tiny_processor(tiny_model_dir):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(tiny_model_dir)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_processor):
    return tiny_processor.tokenizer


@pytest.fixture(scope="session")
def tiny_model(tiny_model_dir):
    from transformers import Qwen2_5_VLForConditionalGeneration

    return Qwen2_5_VLForConditionalGeneration.from_pretrained(tiny_model_dir).eval()


@pytest.fixture(scope="session")
def tiny_qwen3_dir(tmp_path_factory):
    """The tiny random Qwen3-VL (16-px patches: 32 pixels per token side; head size 32, which vLLM serves)."""
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    return build_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen3"), family="qwen3_vl")


@pytest.fixture(scope="session")
def tiny_qwen3_processor(tiny_qwen3_dir):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(tiny_qwen3_dir)


@pytest.fixture(scope="session")
def evidence_video(tmp_path_factory):
    path = tmp_path_factory.mktemp("videos") / "evidence.mp4"
    return write_video(path, duration=EVIDENCE_DURATION, fps=4, width=224, height=168, evidence=EVIDENCE)
