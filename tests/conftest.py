"""Shared fixtures: tiny random Qwen2.5-VL and Qwen3-VL models built offline, synthetic mp4s with known evidence."""

import os

# Before anything imports torch, torchvision, qwen-vl-utils or datasets.
os.environ.setdefault("OMP_NUM_THREADS", "1")  # forked dataset workers hang in libgomp otherwise
os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable  # noqa: E402

ensure_torchvision_importable()

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

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
