"""Tests on vLLM's real CPU engine (marker ``vllm``): EasyR1's own rollout and the inference backend.

They run where vLLM imports, i.e. in the environment of ``bash scripts/install-cpu.sh --vllm`` (EasyR1 v0.3.2
with its vLLM 0.11.0, CPU build): ``.venv-vllm/bin/python -m pytest -m vllm tests/vllm``. Elsewhere they skip.
One tiny model serves them all: the random Qwen2.5-VL with head size 32 (vLLM's CPU attention takes 32..512)
and a released checkpoint's pixel bounds. Each test module builds one engine; ``enforce_eager`` keeps its
start at about a second (compiling the model for the CPU would take ~25 s).
"""

from __future__ import annotations

import importlib.util
import os
import socket

import pytest

# vLLM's engine in this process (EasyR1's rollout does the same: external_launcher), 1 GiB of KV cache.
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


def _real_vllm() -> bool:
    spec = importlib.util.find_spec("vllm")
    return spec is not None and spec.origin is not None and "shims" not in spec.origin


pytestmark = pytest.mark.vllm
SKIP = pytest.mark.skipif(
    not _real_vllm(), reason="vLLM is not installed here: run in .venv-vllm (bash scripts/install-cpu.sh --vllm)"
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/vllm/" in item.nodeid.replace(os.sep, "/"):
            item.add_marker(pytest.mark.vllm)
            item.add_marker(SKIP)


@pytest.fixture(scope="session", autouse=True)
def vllm_cpu_distribution():
    """EasyR1 main's rollout asks ``importlib.metadata.version("vllm")``, which the CPU build (distribution
    ``vllm-cpu``) does not answer: the tests that build EasyR1's rollout in this process get the CPU seam that answers
    it, as ``easyr1 train --cpu`` gives its workers (nothing happens on EasyR1 v0.3.2, which never asks)."""
    if not _real_vllm():
        yield
        return
    from zoomzero_plugin.hosts.easyr1 import cpu_seams, seams
    from zoomzero_plugin.hosts.post_import import when_imported

    seam = next(s for s in cpu_seams.CPU_SEAMS if s.name == "cpu:vllm_utils.version")
    when_imported(seam.module, lambda module: seams.apply(seam, module))
    yield


def release_engine(owner) -> None:
    """Shut down the in-process vLLM engine of EasyR1's rollout ``owner`` and drop it, at its module's end: six
    modules' engines (~1.5 GB each) kept to the end of the session held 11 GB in this process while later modules'
    training launches ran (and Ray's memory monitor counts the whole machine)."""
    from zoomzero_plugin.inference.vllm_backend import release_llm

    release_llm(owner, "inference_engine")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def vllm_model_dir(tmp_path_factory):
    """The tiny random Qwen2.5-VL that vLLM's CPU engine serves (head size 32, checkpoint pixel bounds)."""
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    return build_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen-vllm"), for_vllm=True)


@pytest.fixture(scope="session")
def vllm_hf_model(vllm_model_dir):
    """The same checkpoint in transformers (the reference side, and the weights EasyR1's actor would hold)."""
    from transformers import Qwen2_5_VLForConditionalGeneration

    return Qwen2_5_VLForConditionalGeneration.from_pretrained(vllm_model_dir).eval()


@pytest.fixture(scope="session")
def process_group():
    """A one-rank torch.distributed group, as EasyR1's FSDP worker has before it builds the rollout."""
    import torch.distributed as dist

    if not dist.is_initialized():
        env = dict(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        for key, value in env.items():
            os.environ.setdefault(key, value)
        dist.init_process_group("gloo", rank=0, world_size=1)
    yield
