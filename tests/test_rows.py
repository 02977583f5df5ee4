import json

import pytest

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.prompts import grounding_row
from zoomzero_plugin.rows import read_rows, row_truth, write_rows
from zoomzero_plugin.synthetic.benchmark import make_benchmark
from zoomzero_plugin.synthetic.videos import dominant_color
from zoomzero_plugin.video import probe_duration


def test_row_contract_round_trips_through_jsonl_and_parquet(tmp_path):
    row = grounding_row(
        qid="q1",
        question="Why?",
        options=["(A) a", "(B) b"],
        answer="(b)",
        spans=[(1, 2)],
        duration=10,
        video="/v/x.mp4",
        source="test",
    )
    assert row["prompt"].count("<video>") == 1 and row["videos"] == ["/v/x.mp4"]
    truth = row_truth(row)
    assert truth == GroundTruth("B", ("(A) a", "(B) b"), ((1.0, 2.0),), 10.0, "q1", "Why?", {"source": "test"})
    for name in ("rows.jsonl", "rows.parquet"):
        assert write_rows(tmp_path / name, [row, row]) == 2
        assert read_rows(tmp_path / name) == [row, row]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp files left


def test_failed_write_leaves_no_file(tmp_path):
    with pytest.raises(TypeError):
        write_rows(tmp_path / "rows.jsonl", [{"x": object()}])
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="must be"):
        write_rows(tmp_path / "rows.csv", [])


def test_synthetic_benchmark_evidence_is_where_the_rows_say(tmp_path):
    import decord

    rows = read_rows(make_benchmark(tmp_path, n_videos=3, seed=1))
    assert len({r["answer"] for r in rows}) == 3
    for row in rows:
        truth = row_truth(row)
        ((s, e),) = truth.spans
        video = row["videos"][0]
        assert probe_duration(video) == pytest.approx(truth.duration)
        reader = decord.VideoReader(video)
        colour = truth.options["ABCD".index(truth.answer)]
        mid = reader[int((s + e) / 2 * 4)].asnumpy()
        assert dominant_color(mid) == colour
        assert dominant_color(reader[int(max(0, s - 0.5) * 4)].asnumpy()) is None
        assert json.loads(row["answer"])["source"] == "synthetic"
