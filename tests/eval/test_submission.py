"""ReXTime test: rows with hidden labels, evaluated, then exported in the server's submission format (ReXTime/ReXTime
README "Evaluation": one JSON line per test qid, {"qid", "pred_relevant_windows", "ans"}; rextime_eval.py reads
pred_relevant_windows[0][:2] and requires exactly the test set's qids)."""

import json
from pathlib import Path

import pytest

from zoomzero_plugin.commands import cli
from zoomzero_plugin.data.formats import FORMATS
from zoomzero_plugin.data.pipeline import Options, convert
from zoomzero_plugin.eval.metrics import truths_from_rows
from zoomzero_plugin.rows import row_truth, write_rows

FIXTURE = Path(__file__).parents[1] / "data" / "fixtures" / "rextime" / "rextime_test_release.json"
TEST_ROW = {
    "qid": "anet_test8",
    "vid": "v_crafted0003",
    "question": "What follows?",
    "options": ["a", "b", "c", "d"],
    "duration": 30.0,
    "category": "sequential",
    "source": "activitynet_test",
}


@pytest.fixture
def test_rows(tmp_path):
    """The fixture's test question (no 'ans') plus one more, converted by rextime-test."""
    release = tmp_path / "rextime_test.json"
    release.write_text(json.dumps(json.loads(FIXTURE.read_text()) + [TEST_ROW]))
    fmt = FORMATS["rextime-test"]({"input": [release]})
    rows, report = convert(fmt, Options(video_roots=(tmp_path,), check_videos=False), progress=False)
    assert report.written == 2 and not report.skipped
    path = tmp_path / "rextime_test.jsonl"
    write_rows(path, rows)
    return path, rows


@pytest.fixture
def score_only(monkeypatch):
    monkeypatch.setattr(cli, "COMMANDS", {"score": cli.COMMANDS["score"]})


def test_plain_rextime_skips_hidden_labels_and_rextime_test_keeps_them_marked(tmp_path, test_rows):
    _, rows = test_rows
    truths = [row_truth(r) for r in rows]
    assert [t.qid for t in truths] == ["anet_test7", "anet_test8"]
    assert all(t.extra["label_hidden"] is True for t in truths)
    fmt = FORMATS["rextime"]({"input": [FIXTURE]})
    _, report = convert(fmt, Options(video_roots=(tmp_path,), check_videos=False), progress=False)
    assert report.written == 0 and report.skipped == {"no_answer": 1}


def test_hidden_labels_are_never_scored(test_rows):
    _, rows = test_rows
    with pytest.raises(ValueError, match=r"have a hidden label, e.g. row 1 \(anet_test7\).*--export rextime"):
        truths_from_rows(rows)


def test_export_writes_the_servers_format(score_only, test_rows, tmp_path, capsys):
    data, _ = test_rows
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        json.dumps({"qid": "anet_test8", "answer": None, "spans": ["x"], "mode": "one-stage"})
        + "\n"
        + json.dumps({"qid": "anet_test7", "answer": "(b)", "spans": [[3, 1], "x", [10.5, 20]], "confidence": 0.4})
        + "\n"
    )
    out = tmp_path / "submission.jsonl"
    assert (
        cli.main(["score", str(predictions), "--benchmark", "rextime", "--data", str(data), "--export", str(out)]) == 0
    )
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == [  # the data's order; finite pairs as written (the first is scored); a window always present
        {"qid": "anet_test7", "pred_relevant_windows": [[3.0, 1.0], [10.5, 20.0]], "ans": "B"},
        {"qid": "anet_test8", "pred_relevant_windows": [[0.0, 0.0]], "ans": ""},
    ]
    assert "wrote 2 rextime submission lines" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"qid": "anet_test7", "answer": "A", "spans": []}], "1 of 2 questions have no prediction"),
        (
            [{"qid": q, "answer": "A", "spans": []} for q in ("anet_test7", "anet_test8", "qvh_test1")],
            "1 prediction(s) for questions not in the data",
        ),
    ],
)
def test_export_refuses_an_incomplete_or_foreign_file(score_only, test_rows, tmp_path, capsys, records, message):
    data, _ = test_rows
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "submission.jsonl"
    code = cli.main(["score", str(predictions), "--benchmark", "rextime", "--data", str(data), "--export", str(out)])
    assert code == 2 and message in capsys.readouterr().err and not out.exists()


def test_export_is_for_benchmarks_with_a_server(score_only, test_rows, tmp_path, capsys):
    data, _ = test_rows
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("")
    code = cli.main(
        [
            "score",
            str(predictions),
            "--benchmark",
            "nextgqa",
            "--data",
            str(data),
            "--export",
            str(tmp_path / "s.jsonl"),
        ]
    )
    assert code == 2 and "writes rextime submissions, not nextgqa" in capsys.readouterr().err
