"""Fixtures for inference and evaluation: the real transformers backend on the tiny model and a synthetic
benchmark. Tests put chosen words in the real model's mouth with
:class:`~zoomzero_plugin.inference.scripted.ScriptedBackend` (the random tiny model never writes a valid
span), so a test controls which spans a pass predicts and with what confidence while everything
downstream (parsing, planning, decoding the zoom pass, the model's passes) is real.
"""

from __future__ import annotations

import pytest

from zoomzero_plugin.gvqa.zoom import ZoomBudget
from zoomzero_plugin.inference.scripted import ScriptedBackend, template

SMALL = ZoomBudget(max_visual_tokens=64, min_frame_pixels=4 * 28 * 28, fps=1.0, max_frames=256)
grounded = template

__all__ = ["SMALL", "ScriptedBackend", "grounded"]


@pytest.fixture(scope="session")
def tiny_backend(tiny_model_dir):
    from zoomzero_plugin.inference.hf_backend import TransformersBackend

    return TransformersBackend(str(tiny_model_dir), device="cpu", batch_size=4)


@pytest.fixture(scope="session")
def bench_rows(tmp_path_factory):
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    return make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=4, seed=3)
