"""The lmms-eval tasks over dataset rows: official metrics equal to `zoomzero score` on the same predictions."""

from __future__ import annotations

import json

import pytest

from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.errors import DataError, UsageError
from zoomzero_plugin.gvqa.prompts import grounding_row
from zoomzero_plugin.integrations.lmms_eval import task
from zoomzero_plugin.integrations.lmms_eval.task_folder import write_tasks
from zoomzero_plugin.rows import write_rows

TRUTHS = [("q1", "A", (10.0, 20.0)), ("q2", "B", (0.0, 10.0)), ("q3", "C", (20.0, 30.0)), ("q4", "A", (5.0, 15.0))]
REPLIES = [
    "<answer>A</answer><glue>[(12.0, 18.0), (0.0, 5.0)]</glue>",  # right; first span inside the truth
    "<answer>C</answer><glue>[(5.0, 15.0)]</glue>",  # wrong; half of the span on the truth
    "no idea",  # no letter, no span
    "A",  # a bare letter (another model's reply): right, no span
]


@pytest.fixture
def rows(tmp_path, evidence_video):
    rows = [
        grounding_row(
            qid=qid,
            question="Which?",
            options=["w", "x", "y", "z"],
            answer=letter,
            duration=30.0,
            video=str(evidence_video),
            spans=[span],
        )
        for qid, letter, span in TRUTHS
    ]
    write_rows(tmp_path / "rows.jsonl", rows)
    return rows


def lmms_eval_metrics(benchmark: str, rows: list[dict]) -> dict[str, float]:
    """What lmms-eval computes: process_results per row, then each metric's aggregation over the rows' items."""
    per_row = [getattr(task, f"{benchmark}_results")(row, [reply]) for row, reply in zip(rows, REPLIES)]
    return {metric: task.aggregate([items[metric] for items in per_row]) for metric in task.metric_names(benchmark)}


def zoomzero_score(benchmark: str, rows: list[dict], tmp_path) -> dict:
    predictions = tmp_path / "predictions.jsonl"
    records = [task.cited(qid, reply) for (qid, _, _), reply in zip(TRUTHS, REPLIES)]
    predictions.write_text("".join(json.dumps(record) + "\n" for record in records))
    out = tmp_path / f"score-{benchmark}"
    assert (
        zoomzero(
            [
                "score",
                str(predictions),
                "--benchmark",
                benchmark,
                "--data",
                str(tmp_path / "rows.jsonl"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return json.loads((out / "metrics.json").read_text())["metrics"]


def test_nextgqa_by_hand_and_as_zoomzero_score_computes_it(rows, tmp_path):
    got = lmms_eval_metrics("nextgqa", rows)
    # q1: IoP 6/6 = 1, IoU 6/10, IoG 6/10; q2: IoP 5/10, IoU 5/15, IoG 5/10; q3, q4: no span, 0 (they are predicted)
    assert got == pytest.approx(
        {
            "Acc@QA": 50.0,
            "Acc@GQA": 25.0,
            "mIoP": 37.5,
            "IoP@0.3": 50.0,
            "IoP@0.5": 50.0,
            "mIoU": 100 * (0.6 + 1 / 3) / 4,
            "IoU@0.3": 50.0,
            "IoU@0.5": 25.0,
            "mIoG": 27.5,
        }
    )
    score = zoomzero_score("nextgqa", rows, tmp_path)
    assert got == {metric: score[metric] for metric in got}


def test_rextime_and_cgbench_as_zoomzero_score_computes_them(rows, tmp_path):
    rextime, cgbench = lmms_eval_metrics("rextime", rows), lmms_eval_metrics("cgbench", rows)
    assert rextime["mIoU"] == pytest.approx(100 * (0.6 + 1 / 3) / 4) and rextime["Acc"] == 50.0
    # CG-Bench: the union of every span: q1 {12-18, 0-5} vs 10-20: 6 / 15; accuracy over the 3 replies with a letter
    assert cgbench["mIoU"] == pytest.approx(100 * (0.4 + 1 / 3) / 4) and cgbench["Acc"] == pytest.approx(200 / 3)
    for benchmark, got in (("rextime", rextime), ("cgbench", cgbench)):
        score = zoomzero_score(benchmark, rows, tmp_path)
        assert got == {metric: score[metric] for metric in got}


def test_a_reply_is_read_as_the_model_cites_it():
    # spans as written: order kept, a reversed one kept (the official rule scores it 0), the last glue block
    assert task.cited("q", "<think>x</think><answer>(B) cat</answer><glue>[(9, 5), (1, 2)]</glue>") == {
        "qid": "q",
        "answer": "B",
        "spans": [[9.0, 5.0], [1.0, 2.0]],
    }
    assert task.cited("q", "<glue>[(1, 2)]</glue> then <glue>[(3, 4)]</glue>")["spans"] == [[3.0, 4.0]]
    assert task.cited("q", "<answer>D</answer><glue>[(1, 2)</glue>")["spans"] == []  # not a span list


def test_the_task_yaml_names_the_rows_and_the_official_metrics(rows, tmp_path):
    (path,) = write_tasks(tmp_path / "tasks", {"nextgqa": tmp_path / "rows.jsonl"})
    text = path.read_text()
    assert path.name == "nextgqa.yaml" and "task: nextgqa\n" in text
    assert f'test: "{tmp_path / "rows.jsonl"}"' in text and "dataset_path: json\n" in text
    assert "process_results: !function zoomzero_plugin.integrations.lmms_eval.task.nextgqa_results" in text
    assert text.count("aggregation: !function zoomzero_plugin.integrations.lmms_eval.task.aggregate") == 9


def test_parquet_rows_make_a_parquet_task(rows, tmp_path):
    write_rows(tmp_path / "rows.parquet", rows)
    (path,) = write_tasks(tmp_path / "tasks", {"cgbench_grounding": tmp_path / "rows.parquet"})
    text = path.read_text()
    assert "task: cgbench_grounding\n" in text and "dataset_path: parquet\n" in text
    assert "process_results: !function zoomzero_plugin.integrations.lmms_eval.task.cgbench_results" in text


def test_rows_are_checked_before_a_task_is_written(rows, tmp_path):
    bad = tmp_path / "bad.jsonl"
    write_rows(bad, [{**rows[0], "videos": ["/no/such.mp4"]}])
    with pytest.raises(DataError, match="no such video file"):
        write_tasks(tmp_path / "t", {"nextgqa": bad})
    hidden = tmp_path / "hidden.jsonl"
    write_rows(
        hidden,
        [
            grounding_row(
                qid="t1",
                question="Q",
                options=["a", "b"],
                answer="A",
                duration=30.0,
                video=rows[0]["videos"][0],
                label_hidden=True,
            )
        ],
    )
    with pytest.raises(DataError, match=r"--rextime .*hidden.jsonl: 1 row\(s\) have a hidden label"):
        write_tasks(tmp_path / "t", {"rextime": hidden})
    with pytest.raises(UsageError, match="unknown task"):
        write_tasks(tmp_path / "t", {"videomme": bad})
    assert not (tmp_path / "t").exists()


def test_the_command_needs_rows_or_demo(tmp_path, capsys):
    assert zoomzero(["lmms-eval", "tasks", str(tmp_path / "t")]) == 2
    assert capsys.readouterr().err.strip() == (
        "zoomzero lmms-eval tasks: give rows for at least one task (--nextgqa, --rextime, --cgbench) or --demo"
    )
