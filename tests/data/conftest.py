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
    from zoomzero_plugin.commands import cli

    monkeypatch.setattr(cli, "COMMANDS", {k: v for k, v in cli.COMMANDS.items() if k.startswith("data ")})
    return lambda *argv: cli.main([str(a) for a in argv])


@pytest.fixture
def easyr1_loads(tiny_processor):
    """``easyr1_loads(rows_path)``: EasyR1's own RLHFDataset reads every row, video and answer intact."""

    def load(path: Path, video_fps: float = 1.0, **data_kwargs) -> None:
        from verl.utils.dataset import RLHFDataset

        from zoomzero_plugin.ground_truth import GroundTruth
        from zoomzero_plugin.rows import read_rows

        rows = read_rows(path)
        kwargs = dict(
            prompt_key="prompt",
            answer_key="answer",
            video_key="videos",
            video_fps=video_fps,
            max_prompt_length=4096,
            min_pixels=28 * 28 * 4,
            max_pixels=28 * 28 * 16,
            filter_overlong_prompts=False,
        )
        dataset = RLHFDataset(str(path), tiny_processor.tokenizer, tiny_processor, **{**kwargs, **data_kwargs})
        assert len(dataset) == len(rows) > 0
        video_pad = tiny_processor.tokenizer.convert_tokens_to_ids("<|video_pad|>")
        for row, item in zip(rows, dataset, strict=True):
            assert item["multi_modal_data"] == {"videos": row["videos"]}
            assert item["ground_truth"] == row["answer"]
            GroundTruth.parse(item["ground_truth"])
            assert int((item["input_ids"] == video_pad).sum()) > 0
        return dataset

    return load
