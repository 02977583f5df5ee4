"""SFT fixtures: a 3-question synthetic benchmark with small (112x84) videos, and agent transcripts of it."""

from __future__ import annotations

import json

import pytest

from zoomzero_plugin.agent import Trajectory, get_prompts
from zoomzero_plugin.agent.frames import probe
from zoomzero_plugin.agent.transcript import Transcript
from zoomzero_plugin.ground_truth import GroundTruth


@pytest.fixture(scope="session")
def sft_rows(tmp_path_factory):
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    return make_benchmark(tmp_path_factory.mktemp("sft-bench"), n_videos=3, duration=12.0, fps=4, width=112, height=84)


@pytest.fixture(scope="session")
def sft_truths(sft_rows):
    """qid -> (GroundTruth, video path), in row order."""
    out = {}
    for line in open(sft_rows, encoding="utf-8"):
        row = json.loads(line)
        truth = GroundTruth.parse(row["answer"])
        out[truth.qid] = (truth, row["videos"][0])
    return out


def transcript(video: str, turns, prompt: str = "eval") -> dict:
    """The stored transcript of an agent run whose assistant turns were ``turns``."""
    traj = Trajectory(probe(video), prompts=get_prompts(prompt))
    for text in turns:
        if not traj.done:
            traj.step(text)
    return Transcript.from_trajectory(traj).to_dict()


def write_predictions(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)
