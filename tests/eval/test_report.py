"""finalize(): metrics.json, report.md in the paper's layout, and non-empty PNG plots, written atomically."""

import json

import pytest

from zoomzero_plugin.eval.report import finalize, write_report
from zoomzero_plugin.ground_truth import GroundTruth

PNG = b"\x89PNG\r\n\x1a\n"
GROUNDED_PLOTS = {"iou_distribution.png", "miou_by_clue_duration.png", "miou_by_clue_proportion.png"}


def _write_predictions(out_dir, preds):
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))


def _predictions(truths, every=3):
    return [
        {"qid": q, "answer": t.answer if i % 2 else "A", "spans": [list(t.spans[0])] if i % every else []}
        for i, (q, t) in enumerate(truths.items())
        if i % 5
    ]  # every 5th question is missing


def test_finalize_writes_metrics_report_and_plots(tmp_path):
    """A CG-Bench case worked out by hand: three questions with a 40 s clue in a 100 s video."""
    truths = {
        q: GroundTruth.parse(
            {
                "qid": q,
                "answer": "A",
                "options": ["a", "b", "c", "d"],
                "spans": [[0, 40]],
                "duration": 100,
                "domain": domain,
            }
        )
        for q, domain in (("a", "life"), ("b", "life"), ("c", "sports"))
    }
    preds = [
        {"qid": "a", "answer": "A", "spans": [[0, 20]]},  # IoU = IoG = 20/40 = 0.5, right
        {"qid": "b", "answer": "B", "spans": [[0, 4]]},
    ]  # IoU = IoG = 4/40 = 0.1, wrong; c is missing
    _write_predictions(tmp_path, preds)
    metrics = finalize(tmp_path, "cgbench", truths)

    # accuracy over the answered (a, b): 1/2; grounding over the predicted (a, b): IoU 0.5 and 0.1;
    # rec.@IoU over t = .1 … .5: (2 + 1 + 1 + 1 + 1) / 10; acc.@IoU: a (right, IoU .5) counts at every t
    expected = {
        "Acc": 50.0,
        "mIoU": 30.0,
        "rec.@IoU": 60.0,
        "acc.@IoU": 50.0,
        "mIoG": 30.0,
        "questions": 3,
        "predicted": 2,
        "missing": 1,
        "duplicates": 0,
        "Acc[domain=life]": 50.0,
        "n[domain=life]": 2,
    }
    assert {k: metrics[k] for k in expected} == pytest.approx(expected)
    assert "Acc[domain=sports]" not in metrics  # c is missing: not in the accuracy population
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["benchmark"] == "cgbench" and saved["reduction"] == "official"
    assert saved["metrics"] == pytest.approx(metrics)
    bins = {k: [(b["label"], b["n"], b["value"]) for b in v] for k, v in saved["bins"].items()}
    assert bins == {
        "miou_by_clue_duration": [("40 s – 80 s", 2, pytest.approx(30.0))],
        "miou_by_clue_proportion": [("≥ 40%", 2, pytest.approx(30.0))],
        "accuracy_by_video_length": [("1 min – 3 min", 2, 50.0)],
    }

    report = (tmp_path / "report.md").read_text()
    assert (
        "| long-acc. | mIoU | rec.@IoU | acc.@IoU | mIoG |\n|---|---|---|---|---|\n| 50.0 | 30.0 | 60.0 | 50.0 | 30.0 |"
        in report
    )
    assert "| 3 | 2 | 1 | 0 | 0 | 0 | 2 | 2 |" in report  # questions, predicted, missing, …, scored
    assert "## Accuracy by domain\n\n| domain | n | Acc |\n|---|---|---|\n| life | 2 | 50.0 |" in report
    assert "| 40 s – 80 s | 2 | 30.0 |" in report and "| 1 min – 3 min | 2 | 50.0 |" in report

    for name in GROUNDED_PLOTS | {"accuracy_by_video_length.png"}:
        data = (tmp_path / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 2000, name
        assert f"]({name})" in report
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left


@pytest.mark.parametrize(
    "benchmark, header",
    [
        ("nextgqa", "| Acc@QA | Acc@GQA | mIoP | IoP@0.3 | IoP@0.5 | mIoU | IoU@0.3 | IoU@0.5 | mIoG |"),
        ("rextime", "| mIoU | R1@0.3 | R1@0.5 | R1@0.7 | Acc | Acc@IoU≥0.5 | mIoG |"),
        ("rows", "| Acc | mIoU | IoU@0.3 | IoU@0.5 | IoU@0.7 | mIoP | mIoG |"),
        ("videomme", "| Short | Medium | Long | Overall |"),
        ("mlvu", "| M-Avg | Acc |"),
        ("lvbench", "| Overall |"),
    ],
)
def test_each_benchmark_gets_its_paper_table(tmp_path, rextime_sample, benchmark, header):
    truths, _ = rextime_sample
    preds = _predictions(truths)
    metrics = write_report(tmp_path, benchmark, preds, truths, "union")
    report = (tmp_path / "report.md").read_text()
    assert header in report and "reduction **union**" in report
    plots = {p.name for p in tmp_path.glob("*.png")}
    if benchmark in ("videomme", "mlvu", "lvbench"):  # no grounding: only accuracy by video length
        assert plots == {"accuracy_by_video_length.png"} and "Acc" in metrics
        if benchmark == "videomme":  # these rows have no duration_category: those cells are blank
            assert "| – | – | – |" in report
    else:
        assert plots == GROUNDED_PLOTS | {"accuracy_by_video_length.png"}


def test_a_second_report_removes_plots_that_no_longer_apply(tmp_path, rextime_sample):
    truths, _ = rextime_sample
    write_report(tmp_path, "rextime", _predictions(truths), truths)
    assert (tmp_path / "iou_distribution.png").exists()
    write_report(tmp_path, "mlvu", _predictions(truths), truths)
    assert {p.name for p in tmp_path.glob("*.png")} == {"accuracy_by_video_length.png"}


def test_finalize_without_predictions_says_so(tmp_path, rextime_sample):
    with pytest.raises(FileNotFoundError, match="predictions file not found"):
        finalize(tmp_path, "rextime", rextime_sample[0])


def test_a_failed_report_leaves_earlier_files_intact(tmp_path, rextime_sample):
    truths, _ = rextime_sample
    write_report(tmp_path, "rows", _predictions(truths), truths)
    before = (tmp_path / "metrics.json").read_text()
    with pytest.raises(ValueError, match="not in the data"):
        write_report(tmp_path, "rows", [{"qid": "nope"}], truths)
    assert (tmp_path / "metrics.json").read_text() == before


def test_bins_are_left_closed_skip_empty_ones_and_read_well():
    from zoomzero_plugin.eval.metrics import QuestionScore
    from zoomzero_plugin.eval.plots import accuracy_by_video_length, miou_by_clue_proportion, miou_by_clue_seconds

    def q(duration, gt_length, iou, correct):
        return QuestionScore("q", True, "A", correct, True, iou, iou, iou, 0, gt_length, duration)

    scores = [q(60, 2, 0.5, True), q(59.9, 1.9, 0.1, False), q(4000, 80, 1.0, True), q(4000, 400, 0.0, False)]
    assert [(b.label, b.n, b.value) for b in miou_by_clue_seconds(scores)] == [
        ("0 s – 2 s", 1, 10.0),
        ("2 s – 5 s", 1, 50.0),
        ("≥ 80 s", 2, 50.0),
    ]
    assert [(b.label, b.n) for b in miou_by_clue_proportion(scores)] == [("2% – 5%", 3), ("10% – 20%", 1)]
    assert [(b.label, b.n, b.value) for b in accuracy_by_video_length(scores)] == [
        ("0 s – 1 min", 1, 0.0),
        ("1 min – 3 min", 1, 100.0),
        ("≥ 60 min", 2, 50.0),
    ]
