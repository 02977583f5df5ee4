"""`zoomzero eval` on bad videos, bad rows, bad models and damaged or mismatched earlier results: errors that
name the cause (the file, the row, the flag) and come before the expensive work; resumes that match questions
by id and never mix settings."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.errors import DataError, ModelError, ResumeError, VideoError
from zoomzero_plugin.eval.runner import evaluate
from zoomzero_plugin.inference.backend import check_model
from zoomzero_plugin.journal import Journal
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.video import fetch_element

from ..helpers import within_seconds
from .test_runner import CFG, SMALL_FLAGS, Counting


def qid(row) -> str:
    return json.loads(row["answer"])["qid"]


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def truncated(tmp_path, bench_rows):
    """The first half of a real synthetic mp4 (its index, written last, is lost)."""
    data = open(read_rows(bench_rows)[0]["videos"][0], "rb").read()
    path = tmp_path / "truncated.mp4"
    path.write_bytes(data[: len(data) // 2])
    return path


def test_a_video_that_does_not_decode_names_the_file_and_decords_reason(truncated):
    """qwen-vl-utils retries with torchvision, whose AttributeError once hid decord's error."""
    with pytest.raises(VideoError) as e:
        fetch_element({"video": str(truncated), "nframes": 4, "max_pixels": 4 * 28 * 28}, image_patch_size=14)
    message = str(e.value)
    assert message.startswith(f"{truncated}: cannot decode it (decord: ")
    assert "Invalid data found when processing input" in message  # FFmpeg's words, through PyAV
    assert "read_video" not in message and "torchvision" not in message


@pytest.mark.parametrize("kind, words", [("missing", "no such video file"), ("empty", "an empty file (0 bytes)")])
def test_missing_or_empty_videos_stop_the_run_before_any_question(tiny_backend, bench_rows, tmp_path, kind, words):
    rows = read_rows(bench_rows)[:3]
    video = tmp_path / f"{kind}.mp4"
    if kind == "empty":
        video.write_bytes(b"")
    rows[2] = {**rows[2], "videos": [str(video)]}
    backend = Counting(tiny_backend)
    with pytest.raises(DataError, match=rf"1 bad row\(s\): row 3 \({qid(rows[2])}\): {video}: {re.escape(words)}"):
        evaluate(backend, rows, tmp_path / "out", benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    assert backend.requests == 0 and not (tmp_path / "out" / "predictions.jsonl").exists()


def test_bad_rows_are_named_before_the_model_loads(bench_rows, tmp_path, monkeypatch, capsys):
    from zoomzero_plugin.eval import runner

    monkeypatch.setattr(runner, "load_backend", lambda *a, **k: pytest.fail("the model was loaded"))
    rows = read_rows(bench_rows)[:3]
    truth = json.loads(rows[1]["answer"])
    rows[1] = {**rows[1], "answer": json.dumps({**truth, "spans": [[5, 2]]})}  # reversed span
    rows.append(rows[0])  # a repeated question id
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = zoomzero(
        [
            "eval",
            "--benchmark",
            "rows",
            "--model",
            "no/such-model",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "out"),
            *SMALL_FLAGS,
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(
        f"zoomzero eval: {data}: 2 bad row(s): row 2 ({truth['qid']}): ground-truth spans [[5, 2]] "
        "are invalid: ['reversed']; row 4: question id"
    )
    assert f"{qid(rows[0])!r} repeats row 1" in err


def test_skipped_failures_are_asked_again_on_resume(tiny_backend, bench_rows, truncated, tmp_path):
    rows = read_rows(bench_rows)[:3]
    good = rows[1]["videos"][0]
    rows[1] = {**rows[1], "videos": [str(truncated)]}
    backend = Counting(tiny_backend)
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False, skip_errors=True)
    first = lines(tmp_path / "predictions.jsonl")
    assert [r.get("error", "")[:10] for r in first] == ["", "VideoError", ""] and first[1]["answer"] is None
    shutil.copy(good, truncated)  # the video is fixed: the next run asks that question, and only that one
    asked = backend.requests
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False, skip_errors=True)
    assert backend.requests == asked + 1
    again = lines(tmp_path / "predictions.jsonl")
    assert [r["qid"] for r in again] == [qid(rows[0]), qid(rows[2]), qid(rows[1])]  # each once
    assert again[:2] == [first[0], first[2]] and "error" not in again[2] and again[2]["passes"]
    timings = {r["qid"]: r for r in lines(tmp_path / "timings.jsonl")}
    assert sorted(timings) == sorted(r["qid"] for r in again)
    # the question asked again has its new timing (one-stage: one pass, some seconds), not its failure's (no pass)
    assert len(timings[qid(rows[1])]["passes"]) == 1 and timings[qid(rows[1])]["total_s"] > 0


def test_a_resume_matches_questions_by_id_not_by_count(tiny_backend, bench_rows, tmp_path):
    """Rows reordered between runs: only the two questions not yet answered are asked."""
    rows = read_rows(bench_rows)
    backend = Counting(tiny_backend)
    evaluate(backend, rows[:2], tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    first = lines(tmp_path / "predictions.jsonl")
    evaluate(backend, rows[::-1], tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    assert backend.requests == 4
    records = lines(tmp_path / "predictions.jsonl")
    assert [r["qid"] for r in records] == [qid(r) for r in rows[:2]] + [qid(rows[3]), qid(rows[2])]
    assert records[:2] == first
    with pytest.raises(ResumeError, match=r"not in the data.*'synth00[01]'"):  # rows filtered: refused
        evaluate(backend, rows[2:], tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)


def test_results_without_run_json_are_refused(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)[:2]
    evaluate(tiny_backend, rows[:1], tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    (tmp_path / "run.json").unlink()
    with pytest.raises(ResumeError, match="holds results but no run.json.*--restart"):
        evaluate(tiny_backend, rows, tmp_path, benchmark="rows", mode="coarse-to-fine", cfg=CFG, progress=False)
    backend = Counting(tiny_backend)
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False, repair=True)
    assert backend.requests == 1 and json.loads((tmp_path / "run.json").read_text())["mode"] == "one-stage"


def test_a_damaged_line_or_run_json_names_the_file_and_the_way_out(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)[:3]
    evaluate(tiny_backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    path = tmp_path / "predictions.jsonl"
    text = path.read_text().split("\n")
    path.write_text("\n".join([text[0], text[1][:40], *text[2:]]))  # the middle line cut
    with pytest.raises(ResumeError, match=rf"{path}:2: not JSON .*2 line\(s\) are readable\. --repair keeps"):
        evaluate(tiny_backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    backend = Counting(tiny_backend)
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False, repair=True)
    assert backend.requests == 1  # only the damaged question is asked again
    assert sorted(r["qid"] for r in lines(path)) == sorted(qid(r) for r in rows)
    settings = tmp_path / "run.json"
    settings.write_text('{"benchmark": "rows", "mo')
    with pytest.raises(ResumeError, match=rf"{settings}: damaged \(not valid JSON.*--repair to store"):
        evaluate(tiny_backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False)
    evaluate(backend, rows, tmp_path, benchmark="rows", mode="one-stage", cfg=CFG, progress=False, repair=True)
    assert backend.requests == 1 and json.loads(settings.read_text())["benchmark"] == "rows"


def test_a_refused_resume_names_the_flags_that_differ(tiny_model_dir, bench_rows, tmp_path, capsys):
    args = [
        "eval",
        "--benchmark",
        "rows",
        "--model",
        str(tiny_model_dir),
        "--data",
        str(bench_rows),
        "--limit",
        "1",
        "--out",
        str(tmp_path),
        "--max-new-tokens",
        "8",
        *SMALL_FLAGS,
    ]
    assert zoomzero(args) == 0
    capsys.readouterr()
    assert zoomzero([*args, "--fps", "2", "--top-k", "2"]) == 2
    err = capsys.readouterr().err
    assert "other settings: --fps (1.0 there, 2.0 now), --top-k (4 there, 2 now); use another output folder" in err


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda tmp: tmp / "nowhere", "no such folder"),
        (lambda tmp: "./not-here", "no such folder"),
        (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "has no config.json"),
        (lambda tmp: (tmp / "f.bin").write_bytes(b"x") and tmp / "f.bin", "a file; expected a model folder"),
        (lambda tmp: "not a hub id!", "not a hub id"),
    ],
)
def test_local_models_are_checked_at_once(tmp_path, make, words):
    model = str(make(tmp_path))
    with pytest.raises(ModelError, match=f"--model {model}: .*{words}"):
        check_model(model)


def test_hub_ids_offline_or_unreachable_fail_at_once(monkeypatch):
    """Once 143 s of retries; now one request at most. No real network: an offline flag, and an endpoint that
    refuses connections."""
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", "/nonexistent-cache")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with (
        within_seconds(30),
        pytest.raises(ModelError, match="not in the local Hugging Face cache while HF_HUB_OFFLINE"),
    ):
        check_model("Qwen/Qwen2.5-VL-7B-Instruct")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub, "ENDPOINT", "http://127.0.0.1:9")  # the discard port: connection refused
    with within_seconds(30), pytest.raises(ModelError, match=r"127\.0\.0\.1:9\) cannot be reached \(no connection\)"):
        check_model("Qwen/Qwen2.5-VL-7B-Instruct")


def test_a_bad_model_fails_before_any_video_is_decoded(bench_rows, tmp_path, capsys, monkeypatch):
    from zoomzero_plugin import video

    monkeypatch.setattr(video, "fetch_element", lambda *a, **k: pytest.fail("a video was decoded"))
    code = zoomzero(
        [
            "eval",
            "--benchmark",
            "rows",
            "--model",
            str(tmp_path / "no-model"),
            "--data",
            str(bench_rows),
            "--out",
            str(tmp_path / "out"),
            *SMALL_FLAGS,
        ]
    )
    assert code == 2
    assert capsys.readouterr().err.strip() == f"zoomzero eval: --model {tmp_path / 'no-model'}: no such folder"


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--fps", "0"], "--fps must be > 0, got 0.0"),
        (["--top-k", "0"], "--top-k must be >= 1, got 0"),
        (["--min-shrink", "1"], "--min-shrink must be in [0, 1), got 1.0"),
        (["--max-frame-pixels", "100"], "--max-frame-pixels (100) must be >= --min-frame-pixels (3136)"),
    ],
)
def test_bad_flag_values_are_named(bench_rows, tmp_path, capsys, flags, words):
    code = zoomzero(
        [
            "eval",
            "--benchmark",
            "rows",
            "--model",
            "m",
            "--data",
            str(bench_rows),
            "--out",
            str(tmp_path),
            *SMALL_FLAGS,
            *flags,
        ]
    )
    assert code == 2 and capsys.readouterr().err.strip() == f"zoomzero eval: {words}"


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.fixed_dictionaries({"qid": st.text("abc", min_size=1, max_size=3), "x": st.integers()}),
        max_size=4,
        unique_by=lambda r: r["qid"],
    ),
    st.integers(1, 60),
)
def test_a_journal_drops_a_last_line_cut_anywhere(tmp_path_factory, records, cut):
    """A kill during a write leaves part of a line: opening the journal removes exactly those bytes."""
    path = tmp_path_factory.mktemp("j") / "predictions.jsonl"
    whole = "".join(json.dumps(r) + "\n" for r in records).encode()
    torn = json.dumps({"qid": "in-flight", "answer": "A", "spans": [[1, 2]]}).encode()
    path.write_bytes(whole + torn[: min(cut, len(torn) - 1)])
    journal = Journal(path)
    assert journal.records == records and path.read_bytes() == whole
    journal.append([{"qid": "in-flight", "answer": "B"}])
    assert Journal(path).records == [*records, {"qid": "in-flight", "answer": "B"}]
