"""`zoomzero data check`: one good row and one row per fault; corrupt and truncated mp4s are row errors."""

from __future__ import annotations

import json
import shutil

import pytest

from zoomzero_plugin.data.check import check_row, probe_video, tolerance
from zoomzero_plugin.gvqa.prompts import grounding_row
from zoomzero_plugin.rows import write_rows

from .conftest import CLIP_SECONDS


def row(qid, video, *, duration=CLIP_SECONDS, answer="A", spans=((1.0, 2.0),)):
    return grounding_row(
        qid=qid,
        question="Which colour?",
        options=["red", "blue"],
        answer=answer,
        duration=duration,
        video=str(video),
        spans=spans,
    )


def edit_answer(r, **changes):
    truth = json.loads(r["answer"])
    truth.update(changes)
    return {**r, "answer": json.dumps(truth)}


@pytest.fixture
def faulty(tmp_path, clip):
    """Rows: one good, then one per fault; returns (rows path, {qid: expected check})."""
    good = shutil.copy(clip, tmp_path / "good.mp4")
    data = clip.read_bytes()
    (tmp_path / "truncated.mp4").write_bytes(data[: len(data) // 2])
    (tmp_path / "garbage.mp4").write_bytes(bytes(range(256)) * 20)
    rows = [
        row("good", good),
        row("missing", tmp_path / "nowhere.mp4"),
        row("truncated", tmp_path / "truncated.mp4"),
        row("garbage", tmp_path / "garbage.mp4"),
        row("span_past_end", good, duration=10.0, spans=[(3.0, 9.0)]),  # the file is 4 s long
        edit_answer(row("not_an_option", good), answer="C"),
        edit_answer(row("past_row_end", good), spans=[[3.0, 6.5]]),
        {**row("two_videos", good), "prompt": "<video><video>Which colour?"},
        edit_answer(row("reversed", good), spans=[[3.0, 1.0]]),
        row("good", good),  # the same qid again
    ]
    expected = {
        "missing": {"missing_video"},
        "truncated": {"undecodable_video"},
        "garbage": {"undecodable_video"},
        "span_past_end": {"duration_mismatch", "span_past_end"},
        "not_an_option": {"answer_not_in_options"},
        "past_row_end": {"span_past_end"},
        "two_videos": {"video_placeholders"},
        "reversed": {"invalid_span"},
        "good": {"duplicate_qid"},
    }
    path = tmp_path / "rows.jsonl"
    write_rows(path, rows)
    return path, expected


def test_each_fault_is_reported_by_id_and_exit_is_nonzero(faulty, zoomzero, capsys, tmp_path):
    path, expected = faulty
    report = tmp_path / "check.json"
    assert zoomzero("data", "check", path, "--report", report, "--workers", "2") == 1
    out = capsys.readouterr().out
    assert "checked 10 rows in 1 file(s), 4 video(s) probed: 1 ok, 9 with errors" in out
    result = json.loads(report.read_text())
    found = {o["qid"]: {c for c, _ in o["problems"]} for o in result["offending"]}
    assert found == expected
    assert result["errors"] == {
        "undecodable_video": 2,
        "span_past_end": 2,
        "missing_video": 1,
        "duration_mismatch": 1,
        "answer_not_in_options": 1,
        "video_placeholders": 1,
        "invalid_span": 1,
        "duplicate_qid": 1,
    }
    table = {
        line.split()[0]: int(line.split()[1])
        for line in out.splitlines()
        if line.startswith("  ") and line.split()[0] in result["errors"]
    }
    assert table == result["errors"]
    listed = out.split("offending rows:")[1].splitlines()[1:]
    assert [line.split(":")[0].strip() for line in listed] == [o["qid"] for o in result["offending"]]
    assert "missing_video: " + str(path.parent / "nowhere.mp4") in out


def test_clean_rows_pass_and_folders_are_read(tmp_path, clip, zoomzero, capsys):
    data = tmp_path / "stage1"
    data.mkdir()
    write_rows(data / "a.jsonl", [row("a1", clip), row("a2", clip, spans=[])])
    write_rows(data / "b.jsonl", [row("b1", clip, duration=CLIP_SECONDS + 0.5)])
    assert zoomzero("data", "check", data) == 0
    assert "checked 3 rows in 2 file(s), 1 video(s) probed: 3 ok, 0 with errors" in capsys.readouterr().out
    # The same qid in two files of one training folder is an error.
    write_rows(data / "c.jsonl", [row("a1", clip)])
    assert zoomzero("data", "check", data, "--skip-videos") == 1
    out = capsys.readouterr().out
    assert "videos skipped" in out and "a1: duplicate_qid: also at a.jsonl:1" in out
    # EasyR1 reads a folder as files of one type and nothing else: a report or a .parquet among .jsonl breaks it.
    (data / "c.jsonl").unlink()
    write_rows(data / "d.parquet", [row("d1", clip)])
    (data / "report.json").write_text("{}")
    assert zoomzero("data", "check", data, "--skip-videos") == 1
    assert "a.jsonl, b.jsonl, d.parquet, report.json" in capsys.readouterr().err


def test_duration_tolerance_seconds_or_percent(tmp_path, clip, zoomzero):
    path = tmp_path / "rows.jsonl"
    write_rows(path, [row("long", clip, duration=CLIP_SECONDS * 1.2)])  # 0.8 s off a 4.8 s row
    assert zoomzero("data", "check", path) == 0
    assert zoomzero("data", "check", path, "--duration-tolerance", "0.5") == 1
    assert zoomzero("data", "check", path, "--duration-tolerance", "10%") == 1
    assert zoomzero("data", "check", path, "--duration-tolerance", "20%") == 0
    assert tolerance("2%")(50.0) == pytest.approx(1.0) and tolerance("1.5")(1e4) == 1.5
    with pytest.raises(Exception, match="neither seconds"):
        tolerance("soon")


def test_probe_never_raises_on_broken_files(tmp_path, clip):
    data = clip.read_bytes()
    cases = {"empty.mp4": b"", "head.mp4": data[:100], "tail_cut.mp4": data[:-200], "text.mp4": b"not a video\n" * 50}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        probe = probe_video(str(tmp_path / name))
        assert probe.duration is None and probe.error, name
    assert probe_video(str(tmp_path / "absent.mp4")).missing
    assert probe_video(str(clip)).duration == pytest.approx(CLIP_SECONDS)


def test_rows_that_are_not_rows(tmp_path):
    tol = tolerance("1")
    keys = ("prompt", "videos", "answer")
    assert [p.check for p in check_row({"prompt": "<video>x"}, keys, tol, "f:1").problems] == ["bad_row"]
    info = check_row({"prompt": "<video>x", "videos": "v.mp4", "answer": "not json"}, keys, tol, "f:2")
    assert info.qid == "f:2" and {p.check for p in info.problems} == {"bad_row", "bad_answer"}
    info = check_row(
        {"prompt": 3, "videos": ["v.mp4"], "answer": {"answer": "A", "options": ["x", "y"], "duration": -1, "qid": 7}},
        keys,
        tol,
        "f:3",
    )
    assert info.qid == "7" and {p.check for p in info.problems} == {"video_placeholders", "bad_answer"}
