"""Fixtures for the data tools: upstream-format files, a tiny clip copied wherever a row expects a video."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CLIP_SECONDS = 4.0


@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> Path:
    """A 4 s, 4 fps, 64x48 H.264 mp4."""
    from zoomzero_plugin.synthetic.videos import write_video

    return write_video(tmp_path_factory.mktemp("clip") / "clip.mp4", duration=CLIP_SECONDS, fps=4, width=64, height=48)


@pytest.fixture
def videos(tmp_path, clip):
    """``videos("a/b.mp4", …, root="videos")`` copies the clip to each path under ``tmp_path/root``."""

    def make(*relpaths: str, root: str = "videos") -> Path:
        base = tmp_path / root
        base.mkdir(parents=True, exist_ok=True)
        for rel in relpaths:
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(clip, base / rel)
        return base

    return make


@pytest.fixture
def zoomzero(monkeypatch):
    """Run ``zoomzero data …`` through the real command-line parser; returns the exit code."""
    from zoomzero_plugin import cli

    monkeypatch.setattr(cli, "COMMANDS", {k: v for k, v in cli.COMMANDS.items() if k.startswith("data ")})
    return lambda *argv: cli.main([str(a) for a in argv])
