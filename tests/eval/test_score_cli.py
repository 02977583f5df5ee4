"""`zoomzero score` end to end: dataset rows + a predictions file → printed table and report files."""

import json

import pytest

from zoomzero_plugin.commands import cli
from zoomzero_plugin.eval.metrics import truths_from_rows
from zoomzero_plugin.rows import write_rows

from .conftest import cgbench_rows, nextgqa_rows


@pytest.fixture
def score_only(monkeypatch):
    """The real registry and parser, holding only this subcommand (others may not exist on this branch)."""
    assert cli.COMMANDS["score"] == "zoomzero_plugin.eval.score"
    monkeypatch.setattr(cli, "COMMANDS", {"score": cli.COMMANDS["score"]})


@pytest.fixture
def files(tmp_path):
    rows, _ = nextgqa_rows()
    data = tmp_path / "nextgqa_val.parquet"
    write_rows(data, rows)
    truths = truths_from_rows(rows)
    preds = [  # 3 of the 38 questions; every value below is worked out by hand
        {"qid": "3249402410_9", "answer": "C", "spans": [[17.1, 21.3], [0, 1]], "confidence": 0.5},  # right; IoU 1
        {"qid": "3477387686_2", "answer": "A", "spans": [[30, 31.75]]},  # wrong (D); IoU 1.75/3.5 = 0.5, IoP 1
        {"qid": "10030609934_1", "answer": "E", "spans": [[0, 2.8]]},  # right; touches (2.8, 7.6): IoU 0, IoP 0
    ]
    assert [truths[p["qid"]].spans for p in preds] == [((17.1, 21.3),), ((30.0, 33.5),), ((2.8, 7.6),)]
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in preds))
    return data, path, preds, truths


HEADER = "| Acc@QA | Acc@GQA | mIoP | IoP@0.3 | IoP@0.5 | mIoU | IoU@0.3 | IoU@0.5 | mIoG |"


def test_score_prints_the_table_and_writes_the_report(score_only, files, tmp_path, capsys):
    data, path, preds, truths = files
    out = tmp_path / "report"
    assert cli.main(["score", "--benchmark", "nextgqa", str(path), "--data", str(data), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # Acc@QA: 2 right of all 38. Over the 3 predicted (first span as written): IoP 1, 1, 0; IoU 1, 0.5, 0;
    # Acc@GQA: right and IoP >= 0.5: the first only.
    assert HEADER in printed
    assert "| 5.3 | 33.3 | 66.7 | 66.7 | 66.7 | 50.0 | 66.7 | 66.7 | 50.0 |" in printed
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    assert (metrics["Acc@QA"], metrics["mIoU"], metrics["IoU@0.5"]) == pytest.approx((100 * 2 / 38, 50.0, 200 / 3))
    assert (out / "report.md").read_text().count("![") == 4

    assert cli.main(["score", "--benchmark", "nextgqa", str(path), "--data", str(data), "--reduction", "union"]) == 0
    # union: the first question's [0, 1] joins its span: ∩ 4.2 s, ∪ 5.2 s → IoU = IoP = 4.2 / 5.2
    union_iou = 4.2 / 5.2
    mIoP, mIoU = 100 * (union_iou + 1 + 0) / 3, 100 * (union_iou + 0.5 + 0) / 3
    assert f"| 5.3 | 33.3 | {mIoP:.1f} | 66.7 | 66.7 | {mIoU:.1f} | 66.7 | 66.7 | 50.0 |" in capsys.readouterr().out


def test_score_errors_are_clear(score_only, files, tmp_path, capsys):
    data, path, _, _ = files
    assert cli.main(["score", "--benchmark", "rows", str(tmp_path / "none.jsonl"), "--data", str(data)]) == 2
    assert "predictions file not found" in capsys.readouterr().err
    assert cli.main(["score", "--benchmark", "rows", str(path), "--data", str(tmp_path / "rows.jsonl")]) == 2
    assert "data file not found" in capsys.readouterr().err

    stray = tmp_path / "stray.jsonl"
    stray.write_text(json.dumps({"qid": "not-a-question", "answer": "A", "spans": []}) + "\n")
    assert cli.main(["score", "--benchmark", "rows", str(stray), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert "not in the data" in err and "not-a-question" in err

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"qid": "a"}\nnot json\n{"qid": "b"}\n')
    assert cli.main(["score", "--benchmark", "rows", str(broken), "--data", str(data)]) == 2
    assert "broken.jsonl:2: not JSON" in capsys.readouterr().err

    with pytest.raises(SystemExit) as e:
        cli.main(["score", "--benchmark", "nope", str(path), "--data", str(data)])
    assert e.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err


def test_scoring_rows_of_another_benchmark_says_so(score_only, tmp_path, capsys):
    rows = [
        {**r, "answer": json.dumps({**json.loads(r["answer"]), "source": "cgbench"})}  # as data convert writes
        for r in cgbench_rows()[0]
    ]
    data = tmp_path / "cgbench.jsonl"
    write_rows(data, rows)
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps({"qid": t, "answer": "A", "spans": []}) + "\n" for t in truths_from_rows(rows)))
    assert cli.main(["score", "--benchmark", "nextgqa", str(path), "--data", str(data)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {len(rows)} of {len(rows)} rows come from cgbench" in err and "--benchmark cgbench" in err
    assert cli.main(["score", "--benchmark", "cgbench", str(path), "--data", str(data)]) == 0
    assert "warning" not in capsys.readouterr().err
    # rows: the package's own metrics over any rows, whatever their source: nothing to warn about
    assert cli.main(["score", "--benchmark", "rows", str(path), "--data", str(data)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_cut_last_line_and_an_empty_file_are_said(score_only, files, tmp_path, capsys):
    data, path, _, _ = files
    path.write_text(path.read_text() + '{"qid": "3249402411_0", "ans')  # a writer killed mid-line
    assert cli.main(["score", "--benchmark", "nextgqa", str(path), "--data", str(data)]) == 0
    captured = capsys.readouterr()
    assert (
        f"zoomzero score: warning: {path}: its last line is cut short (no newline, not JSON): that line is "
        "skipped, 3 prediction(s) read"
    ) in captured.err
    assert "| 5.3 |" in captured.out  # Acc@QA: 2 of 38 right, as without the cut line
    assert cli.main(["score", "--benchmark", "nextgqa", "/dev/null", "--data", str(data)]) == 2
    assert capsys.readouterr().err == (
        "zoomzero score: /dev/null: holds no predictions (empty); expected one JSON object per line\n"
    )
    assert cli.main(["score", "--benchmark", "nextgqa", str(tmp_path), "--data", str(data)]) == 2
    assert f"predictions {tmp_path} is a folder; give a file" in capsys.readouterr().err


def test_rows_without_answers_are_named_by_file_row_and_what_is_missing(score_only, files, tmp_path, capsys):
    """Rows of another tool (no answer column), a repeated question: one line, as `zoomzero eval` says it."""
    _, path, _, _ = files
    data = tmp_path / "rows.jsonl"
    good = {
        "prompt": "<video>Q?",
        "videos": ["v.mp4"],
        "answer": json.dumps({"answer": "B", "options": ["x", "y"], "spans": [], "duration": 10.0, "qid": "q1"}),
    }
    data.write_text("".join(json.dumps(r) + "\n" for r in [{"prompt": "<video>Q?", "videos": ["v.mp4"]}, good, good]))
    assert cli.main(["score", "--benchmark", "rows", str(path), "--data", str(data)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(
        f"zoomzero score: {data}: 2 bad row(s): row 1: no 'answer' column; row 3: question id 'q1' repeats row 2"
    )


def test_only_the_last_line_of_a_file_without_a_final_newline_is_taken_for_cut(tmp_path):
    from zoomzero_plugin.eval.predictions import load_predictions

    path = tmp_path / "p.jsonl"
    path.write_text('{"qid": "a"}\nnot json')  # the last line, no newline: cut by a killed writer, skipped
    read = load_predictions(path)
    assert (read.records, read.torn) == ([{"qid": "a"}], 1)
    path.write_text('{"qid": "a"}\nnot json\n{"qid": "b"}')  # line 2 of 3 is damage, newline at the end or not
    with pytest.raises(ValueError, match=r"p\.jsonl:2: not JSON"):
        load_predictions(path)
