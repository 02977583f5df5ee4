"""`zoomzero data convert --from longvideobench` and LongVideoBench's official metric definitions."""

from __future__ import annotations

import json

from zoomzero_plugin.eval.metrics import score_predictions, truths_from_rows

from .conftest import FIXTURES
from .test_convert import load_report, truths


def test_longvideobench_rows(tmp_path, videos, zoomzero, easyr1_loads):
    fx = FIXTURES / "longvideobench"
    root = videos("videos/crafted_lvb_a.mp4", "crafted_lvb_b.mp4", "videos/crafted_lvb_c.mp4")
    out, rep = tmp_path / "lvb.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "longvideobench",
            "--input",
            fx / "lvb_val.json",
            "--input",
            fx / "lvb_val_flat.jsonl",
            "--video-root",
            root,
            "--out",
            out,
            "--report",
            rep,
        )
        == 0
    )
    got = truths(out)
    a = got["crafted_lvb_a_0"]
    assert (a["options"], a["answer"], a["duration"]) == (["A pen", "A cup", "A phone", "A book"], "B", 473.5)
    assert (a["duration_group"], a["question_category"], a["level"]) == (600, "S2O", "L1-Perception")
    assert a["_video"] == [str(root / "videos" / "crafted_lvb_a.mp4")]
    b = got["crafted_lvb_b_0"]
    assert (len(b["options"]), b["answer"], b["_video"]) == (5, "E", [str(root / "crafted_lvb_b.mp4")])
    flat = got["crafted_lvb_a_1"]
    assert (flat["options"], flat["answer"]) == (["On the table", "In the sink", "On the shelf"], "C")
    assert load_report(rep)["skipped"] == {"answer_not_in_options": 1, "no_answer": 1}
    easyr1_loads(out)


def test_longvideobench_metrics_by_duration_group(tmp_path):
    def row(qid, group, category, answer="A"):
        return {
            "prompt": "<video>q",
            "videos": ["v.mp4"],
            "answer": json.dumps(
                {
                    "answer": answer,
                    "options": ["x", "y"],
                    "duration": 10.0,
                    "qid": qid,
                    "duration_group": group,
                    "question_category": category,
                }
            ),
        }

    rows = [row("a", 15, "S2O"), row("b", 15, "E3E"), row("c", 600, "S2O"), row("d", 3600, "T2O")]
    predictions = [{"qid": "a", "answer": "A"}, {"qid": "b", "answer": "B"}, {"qid": "c", "answer": "A"}]
    m = score_predictions("longvideobench", predictions, truths_from_rows(rows))
    # lmms-eval: accuracy over every question (d has no prediction: wrong), per duration group and category
    assert m["Acc"] == 50.0
    assert (m["Acc[duration_group=15]"], m["Acc[duration_group=600]"], m["Acc[duration_group=3600]"]) == (
        50.0,
        100.0,
        0.0,
    )
    assert "Acc[duration_group=60]" not in m
    assert (m["Acc[question_category=S2O]"], m["n[question_category=S2O]"]) == (100.0, 2)


def test_longvideobench_report_table(tmp_path):
    from zoomzero_plugin.eval.report import metric_table

    table = metric_table("longvideobench", {"Acc": 50.0, "Acc[duration_group=15]": 25.0})
    assert table.splitlines()[0] == "| 8–15 s | 15–60 s | 3–10 min | 15–60 min | Overall |"
    assert table.splitlines()[2] == "| 25.0 | – | – | – | 50.0 |"


def test_longvideobench_test_split_is_refused_without_labels(tmp_path, videos, zoomzero):
    only_test = tmp_path / "lvb_test_wo_gt.json"
    items = [
        r for r in json.loads((FIXTURES / "longvideobench" / "lvb_val.json").read_text()) if "correct_choice" not in r
    ]
    only_test.write_text(json.dumps(items))
    root = videos("videos/crafted_lvb_c.mp4")
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "longvideobench",
        "--input",
        only_test,
        "--video-root",
        root,
        "--out",
        tmp_path / "none.jsonl",
        "--report",
        tmp_path / "r.json",
    )
    assert code != 0 and not (tmp_path / "none.jsonl").exists()
    assert load_report(tmp_path / "r.json")["skipped"] == {"no_answer": 1}
