"""A synthetic grounded-QA benchmark: videos whose evidence sits in known spans, and rows that ask about it.

Each video shows one coloured square during one span (the evidence) on a moving-bar background; the
question asks for the square's colour, the options are colours, the ground-truth span is the evidence
span. Deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..ground_truth import LETTERS, GroundTruth
from ..gvqa.prompts import grounding_row
from ..rows import write_rows
from .tiny_qwen import build_tiny_qwen
from .videos import COLORS, Evidence, write_video

QUESTION = "What colour is the square that appears in the video?"


def make_benchmark(
    out_dir: str | Path,
    n_videos: int = 4,
    duration: float = 12.0,
    fps: int = 4,
    width: int = 224,
    height: int = 168,
    n_options: int = 4,
    seed: int = 0,
    rows_name: str = "rows.jsonl",
) -> Path:
    """Write ``n_videos`` mp4s and one row per video to ``out_dir/rows_name``; returns the rows path."""
    rng = random.Random(seed)
    names = sorted(COLORS)
    videos = []
    for _ in range(n_videos):
        length = rng.choice([1.5, 2.0, 3.0])
        start = round(rng.uniform(0.5, duration - length - 0.5), 1)
        options = rng.sample(names, n_options)
        letter = rng.randrange(n_options)
        row = dict(question=QUESTION, options=options, answer="ABCDEFGH"[letter], spans=[(start, start + length)])
        videos.append(([Evidence(start, start + length, options[letter])], row))
    return _write_task(Path(out_dir), "synth", videos, duration, fps, (width, height), rows_name)


SQUARES_KEY = "squares"  # rows of make_grounding_task: every square of the video, [start, end, colour]
TASK_COLORS = ("red", "green", "blue", "yellow")  # the options of every make_grounding_task row, in this order
TASK_DURATION, TASK_FPS, TASK_SIZE = 12.0, 4, (112, 84)  # make_grounding_task's videos: seconds, frame rate, pixels


PLACEMENTS = ("middle", "cued")  # where make_grounding_task puts the evidence third
CUE = "white"  # the mark of a cued task's evidence third: a colour no option names


def make_grounding_task(
    out_dir: str | Path,
    n_videos: int = 16,
    seed: int = 0,
    rows_name: str = "rows.jsonl",
    distractors: bool = True,
    placement: str = "middle",
    square: float | None = None,
) -> Path:
    """A grounded-QA task where grounding pays: ``n_videos`` videos of 12 s, each cut in thirds with one coloured
    square in each (0.5 s inside the third's edges); the question asks for the colour of the square in the middle
    third, the ground-truth span. The other two squares are distractors in other option colours, so the whole video
    shows three answers and only its middle third the right one: a pass over the right span can answer, a pass over
    the whole video cannot tell which. Options are :data:`TASK_COLORS` in that order (the letter names the colour);
    rows also carry every square (``squares``). Writes the videos and ``out_dir/rows_name``; returns the rows path.

    ``distractors=False``: the other two thirds show no square, so a look anywhere but the evidence third sees no
    option at all (only the evidence can answer). ``placement="cued"``: the evidence third is drawn per video, and a
    :data:`CUE` square (a colour no option names) fills the first half-second of that third — the frame an overview
    at one frame per third sees (0.25 fps on 12 s: 0, 4 and 8 s) — so the overview shows where to look and the
    question asks for the colour of the square after the white mark. ``square``: the squares' side as a share of the
    frame's shorter side (default two thirds; 1: the full height). The defaults draw the same videos as before these
    options existed."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
    rng = random.Random(seed)
    third = TASK_DURATION / 3
    windows = [(round(k * third + 0.5, 2), round((k + 1) * third - 0.5, 2)) for k in range(3)]
    question = (
        "What colour is the square in the middle of the video?"
        if placement == "middle"
        else f"What colour is the square after the {CUE} mark?"
    )
    videos = []
    for _ in range(n_videos):
        colours = rng.sample(TASK_COLORS, 3)  # [distractor, answer, distractor]
        where = 1 if placement == "middle" else rng.randrange(3)
        others = iter((colours[0], colours[2]))
        squares = [
            (s, e, colours[1] if k == where else next(others))
            for k, (s, e) in enumerate(windows)
            if distractors or k == where
        ]
        marks = [(round(where * third, 2), windows[where][0], CUE)] if placement == "cued" else []
        answer = "ABCD"[TASK_COLORS.index(colours[1])]
        row = dict(question=question, options=list(TASK_COLORS), answer=answer, spans=[windows[where]])
        evidence = [Evidence(s, e, c, square) for s, e, c in squares + marks]
        videos.append((evidence, {**row, SQUARES_KEY: squares}))
    return _write_task(Path(out_dir), "task", videos, TASK_DURATION, TASK_FPS, TASK_SIZE, rows_name)


def _write_task(
    out_dir: Path, name: str, videos: list[tuple[list[Evidence], dict]], duration: float, fps: int, size, rows_name: str
) -> Path:
    """Each video (its evidence) under ``out_dir/videos/<name>NNN.mp4`` and its grounding row (the row's own
    fields) in ``out_dir/rows_name``; returns the rows path."""
    rows = []
    for i, (evidence, fields) in enumerate(videos):
        qid = f"{name}{i:03d}"
        video = write_video(
            out_dir / "videos" / f"{qid}.mp4",
            duration=duration,
            fps=fps,
            width=size[0],
            height=size[1],
            evidence=evidence,
        )
        rows.append(grounding_row(qid=qid, duration=duration, video=str(video.resolve()), source="synthetic", **fields))
    path = out_dir / rows_name
    write_rows(path, rows)
    return path


def prepare_demo(directory: str | Path, n_videos: int = 8, seed: int = 0) -> tuple[Path, Path]:
    """The inputs of a CPU evaluation demo, built once under ``directory``: the tiny random Qwen2.5-VL and a synthetic
    grounded-QA benchmark; returns their paths. The weights are random, so the model's answers are chance-level and
    it writes no valid spans: such a demo shows the pipeline (passes, frames, budgets, metrics, report), not
    accuracy."""
    directory = Path(directory)
    model, rows = directory / "tiny-qwen", directory / "synthetic" / "rows.jsonl"
    if not (model / "config.json").exists():
        build_tiny_qwen(model, seed=seed)
    if not rows.exists():
        make_benchmark(rows.parent, n_videos=n_videos, seed=seed)
    return model, rows


def row_squares(row: Mapping[str, Any]) -> list[tuple[float, float, str]]:
    """The row's squares (``squares`` of :func:`make_grounding_task`): ``(start, end, colour)``."""
    squares = json.loads(row["answer"]).get(SQUARES_KEY)
    if squares is None:
        raise ValueError("see=True names the colour a clip shows: the rows need 'squares' (make_grounding_task)")
    return squares


def colour_letter(truth: GroundTruth, colour: str) -> str:
    """The option letter of a square's ``colour``."""
    return LETTERS[list(truth.options).index(colour)]


def clip_letter(row: Mapping[str, Any], truth: GroundTruth, times: Iterable[float]) -> str | None:
    """The letter of the one square colour shown at the clip's frame ``times``; None when they show no square or
    squares of more than one colour."""
    shown = {colour for start, end, colour in row_squares(row) for t in times if start <= t <= end}
    return colour_letter(truth, shown.pop()) if len(shown) == 1 else None
