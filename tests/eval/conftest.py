"""Fixtures: a few rows of the real NExT-GQA / ReXTime / CG-Bench annotation files, as dataset rows.

The samples in ``fixtures/`` were copied from the benchmarks' public annotation files (NExT-GQA's
val.csv, ReXTime's rextime_val.jsonl, CG-Bench's cgbench_mini.json); they include the awkward cases:
several ground-truth windows, touching windows, windows past the video's end, point windows.
"""

import json
from pathlib import Path

import pytest

from zoomzero_plugin.eval.metrics import truths_from_rows
from zoomzero_plugin.gvqa.prompts import grounding_row

FIXTURES = Path(__file__).parent / "fixtures"
LETTERS = "ABCDEFGH"


def nextgqa_rows(keep_windows: bool = True) -> tuple[list[dict], dict]:
    """Rows for the NExT-GQA sample (qid ``{video}_{qid}`` as in eval_ground.py) and its gsub dict."""
    sample = json.loads((FIXTURES / "nextgqa_val_sample.json").read_text())
    gsub = sample["gsub_val"]
    rows = []
    for q in sample["val_csv_rows"]:
        anno = gsub[q["video_id"]]
        options = [q[f"a{i}"] for i in range(5)]
        locs = anno["location"][q["qid"]]
        extra = {"gt_windows": locs} if keep_windows else {}
        rows.append(
            grounding_row(
                qid=f"{q['video_id']}_{q['qid']}",
                question=q["question"],
                options=options,
                answer=LETTERS[options.index(q["answer"])],
                spans=locs,
                duration=anno["duration"],
                video=f"{q['video_id']}.mp4",
                question_type=q["type"],
                **extra,
            )
        )
    return rows, gsub


def rextime_rows() -> tuple[list[dict], list[dict]]:
    gt = [json.loads(line) for line in (FIXTURES / "rextime_val_sample.jsonl").read_text().splitlines()]
    rows = [
        grounding_row(
            qid=d["qid"],
            question=d["query"],
            options=[f"option {c}" for c in "ABCD"],
            answer=d["ans"],
            spans=d["relevant_windows"],
            duration=d["duration"],
            video=f"{d['vid']}.mp4",
            gt_windows=d["relevant_windows"],
        )
        for d in gt
    ]
    return rows, gt


def cgbench_rows() -> tuple[list[dict], list[dict]]:
    annos = json.loads((FIXTURES / "cgbench_mini_sample.json").read_text())
    rows = [
        grounding_row(
            qid=str(a["qid"]),
            question=a["question"],
            options=a["choices"],
            answer=a["right_answer"],
            spans=a["clue_intervals"],
            duration=a["duration"],
            video=f"{a['video_uid']}.mp4",
            domain=a["domain"],
            sub_category=a["sub_category"],
        )
        for a in annos
    ]
    return rows, annos


@pytest.fixture
def nextgqa_sample():
    rows, gsub = nextgqa_rows()
    return truths_from_rows(rows), gsub


@pytest.fixture
def rextime_sample():
    rows, gt = rextime_rows()
    return truths_from_rows(rows), gt


@pytest.fixture
def cgbench_sample():
    rows, annos = cgbench_rows()
    return truths_from_rows(rows), annos
