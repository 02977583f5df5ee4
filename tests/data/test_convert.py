"""`zoomzero data convert`: every upstream format on a small fixture, exact rows, skip reasons, and EasyR1's
own RLHFDataset loading the output with the tiny processor."""

from __future__ import annotations

import json

import pytest

from zoomzero_plugin.rows import read_rows

from .conftest import CLIP_SECONDS, FIXTURES


def truths(path) -> dict[str, dict]:
    """qid -> the row's answer JSON, plus the row's video under "_video"."""
    out = {}
    for row in read_rows(path):
        truth = json.loads(row["answer"])
        assert row["prompt"].startswith("<video>") and row["prompt"].count("<video>") == 1
        out[truth["qid"]] = {**truth, "_video": row["videos"]}
    return out


def load_report(path) -> dict:
    return json.loads(path.read_text())


def examples(report: dict, reason: str) -> list[str]:
    return [qid for qid, _ in report["examples"][reason]]


def test_nextgqa_rows_spans_letters_and_skips(tmp_path, videos, zoomzero, easyr1_loads):
    fx = FIXTURES / "nextgqa"
    root = videos("1104/4882821564.mp4", "1018/2482028659.mp4", "1160/3842638015.mp4", "0033/2834146886.mp4")
    out, rep = tmp_path / "nextgqa_val.jsonl", tmp_path / "report.json"
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "nextgqa",
        "--input",
        fx / "val.csv",
        "--gsub",
        fx / "gsub_val.json",
        "--video-map",
        fx / "map_vid_vidorID.json",
        "--video-root",
        root,
        "--out",
        out,
        "--report",
        rep,
    )
    assert code == 0
    got = truths(out)
    assert got["4882821564_1"] == {
        "source": "nextgqa",
        "type": "CW",
        "video_id": "4882821564",
        "answer": "C",
        "options": [
            "share with the girl",
            "approach lady sitting there",
            "unwrap it",
            "playing with toy train",
            "gesture something",
        ],
        "spans": [[13.8, 29.8]],
        "duration": 89.99,
        "qid": "4882821564_1",
        "question": "why did the boy pick up one present from the group of them and move to the sofa",
        "_video": [str(root / "1104/4882821564.mp4")],
    }
    # 643 frames at 29.97 fps: the 21.5 s span end is clamped to the video's 21.455 s.
    assert got["2482028659_5"]["spans"] == [[0.0, 6.1], [8.9, 21.455]]
    assert got["2482028659_5"]["duration"] == 21.455 and got["2482028659_5"]["answer"] == "B"
    # ... and the benchmark's own windows are kept for its official per-window metrics
    assert got["2482028659_5"]["gt_windows"] == [[0.0, 6.1], [8.9, 21.5]]
    # Options D and E both read "happy": kept as D, the official loader's choices.index(answer).
    assert got["3842638015_4"]["answer"] == "D" and got["3842638015_4"]["answer_matches"] == ["D", "E"]
    assert sorted(got) == ["2482028659_5", "3842638015_4", "4882821564_1"]
    report = load_report(rep)
    assert report["items"] == 8 and report["written"] == 3
    assert report["skipped"] == {
        "missing_annotation": 2,
        "missing_video": 1,
        "answer_not_in_options": 1,
        "span_outside_video": 1,
    }
    assert examples(report, "missing_annotation") == ["2834146886_99", "1111111111_0"]
    assert examples(report, "missing_video") == ["2435100235_7"]
    assert examples(report, "answer_not_in_options") == ["2834146886_8"]
    assert examples(report, "span_outside_video") == ["2482028659_9"]
    assert report["notes"] == {"clamped_end": 1, "ambiguous_first": 1}
    easyr1_loads(out)


def test_nextgqa_without_videos_and_skipping_ambiguous_answers(tmp_path, zoomzero):
    fx = FIXTURES / "nextgqa"
    out, rep = tmp_path / "rows.parquet", tmp_path / "report.json"
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "nextgqa",
        "--input",
        fx / "val.csv",
        "--gsub",
        fx / "gsub_val.json",
        "--video-map",
        fx / "map_vid_vidorID.json",
        "--video-root",
        tmp_path / "not-yet",
        "--no-video-check",
        "--ambiguous",
        "skip",
        "--out",
        out,
        "--report",
        rep,
    )
    assert code == 0
    got = truths(out)
    assert sorted(got) == ["2435100235_7", "2482028659_5", "4882821564_1"]
    assert got["2435100235_7"]["spans"] == [
        [20.9, 22.7],
        [23.8, 26.0],
        [34.4, 35.8],
        [50.5, 57.5],
        [58.5, 63.597],
    ]  # 1906 frames / 29.97 fps
    assert got["2435100235_7"]["_video"] == [str((tmp_path / "not-yet/0063/2435100235.mp4").resolve())]
    report = load_report(rep)
    assert report["skipped"]["ambiguous_answer"] == 1 and "missing_video" not in report["skipped"]
    assert report["videos_checked"] is False


def test_rextime_repo_ground_truth_with_release_options(tmp_path, videos, zoomzero, easyr1_loads):
    fx = FIXTURES / "rextime"
    root = videos(
        *(
            f"{v}.mp4"
            for v in (
                "2I9-kvemtSU_510.0_660.0",
                "v_ZMTi498qnPc",
                "wUgPzvcKK5c_210.0_360.0",
                "v_NDK0XQnsnmA",
                "v_crafted0001",
            )
        )
    )
    out, rep = tmp_path / "rextime_val.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "rextime",
            "--input",
            fx / "rextime_val.jsonl",
            "--options",
            fx / "rextime_val_release.json",
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
    assert got["qvh_val241"] == {
        "source": "rextime",
        "vid": "2I9-kvemtSU_510.0_660.0",
        "answer": "A",
        "options": ["eating spicy food", "running on a beach", "watching a film", "painting a wall"],
        "spans": [[0.0, 28.0]],
        "duration": 150.0,
        "qid": "qvh_val241",
        "question": "What were the woman and man doing before they showed reactions like verbal exclamations and "
        "reaching for water?",
        "_video": [str(root / "2I9-kvemtSU_510.0_660.0.mp4")],
    }
    assert got["anet_val1314"]["answer"] == "D" and got["anet_val1314"]["spans"] == [[0.0, 129.96]]
    report = load_report(rep)
    assert report["skipped"] == {"no_options": 1, "span_outside_video": 1}
    assert examples(report, "no_options") == ["qvh_val538"] and examples(report, "span_outside_video") == [
        "anet_val9999"
    ]
    easyr1_loads(out)


def test_rextime_release_files_to_parquet_and_hidden_test_labels(tmp_path, videos, zoomzero, easyr1_loads):
    fx = FIXTURES / "rextime"
    root = videos(
        *(
            f"{v}.mp4"
            for v in ("2I9-kvemtSU_510.0_660.0", "v_ZMTi498qnPc", "v_NDK0XQnsnmA", "v_crafted0001", "v_crafted0002")
        )
    )
    out, rep = tmp_path / "rextime.parquet", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "rextime",
            "--input",
            fx / "rextime_val_release.json",
            "--input",
            fx / "rextime_test_release.json",
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
    assert sorted(got) == ["anet_val1314", "anet_val92", "qvh_val241"]
    assert got["anet_val92"]["category"] == "sequential" and got["anet_val92"]["subset"] == "activitynet_val"
    assert load_report(rep)["skipped"] == {"span_outside_video": 1, "no_answer": 1}
    easyr1_loads(out)


def test_cgbench_letters_clues_and_bad_items(tmp_path, videos, zoomzero, easyr1_loads):
    root = videos("3ZpmN3-2-Zo.mp4", "BV1Rm41117YT.mp4", "BV1KK41157zV.mp4", "crafted_cg1.mp4")
    out, rep = tmp_path / "cg.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "cgbench",
            "--input",
            FIXTURES / "cgbench/cgbench_mini.json",
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
    assert got["19"] == {
        "source": "cgbench",
        "video_uid": "BV1Rm41117YT",
        "domain": "Life Record",
        "sub_category": "Entity Perception",
        "answer": "F",
        "options": ["aqua", "mint", "jade", "cyan", "green", "blue", "turquoise", "teal"],
        "spans": [[4.0, 12.0]],
        "duration": 611.0,
        "qid": "19",
        "question": "When the protagonist in the video bought blueberries, what color was the shared bicycle on the "
        "left hand side of the blueberry stall owner?",
        "_video": [str(root / "BV1Rm41117YT.mp4")],
    }
    assert (got["14"]["answer"], got["17"]["answer"]) == ("E", "C")
    report = load_report(rep)
    assert report["skipped"] == {"answer_not_in_options": 1, "span_outside_video": 1, "invalid_span": 1}
    assert [examples(report, r) for r in ("answer_not_in_options", "span_outside_video", "invalid_span")] == [
        ["9001"],
        ["9002"],
        ["9003"],
    ]
    easyr1_loads(out)


def test_gqa_json_labels_durations_and_min_duration(tmp_path, videos, zoomzero, easyr1_loads):
    root = videos("v_-6dz6tBH77I.mp4", "v_0dkIbKXXFzI.mp4", "v_1MjQ6iiEYl0.mp4", "v_2NqHoNWG3Ds.mp4")
    out, rep = tmp_path / "anet.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "gqa-json",
            "--input",
            FIXTURES / "gqa/GVideoQA-anet.json",
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
    assert got["GVideoQA-anet_0"] == {
        "source": "gqa-json",
        "dataset": "GVideoQA-anet",
        "answer": "C",
        "options": [
            "He drops the rope.",
            "He jumps into the water.",
            "He pulls the boat to the dock.",
            "He sits down.",
        ],
        "spans": [[31.2, 38.5], [40.0, 44.0]],
        "duration": 132.5,
        "qid": "GVideoQA-anet_0",
        "question": "What does the man do right after tightening the rope?",
        "_video": [str(root / "v_-6dz6tBH77I.mp4")],
    }
    # No duration in the item: probed from the (4 s) file; "v_0dkIbKXXFzI.mp4" keeps its own suffix.
    assert got["GVideoQA-anet_1"]["duration"] == CLIP_SECONDS and got["GVideoQA-anet_1"]["answer"] == "A"
    assert got["GVideoQA-anet_3"]["answer"] == "B"
    report = load_report(rep)
    assert report["skipped"] == {"answer_not_in_options": 1} and report["notes"] == {"probed_duration": 1}
    easyr1_loads(out)
    # The paper keeps QVHighlights videos longer than 120 s: --min-duration.
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "gqa-json",
            "--input",
            FIXTURES / "gqa/GVideoQA-anet.json",
            "--video-root",
            root,
            "--min-duration",
            "120",
            "--out",
            out,
            "--report",
            rep,
        )
        == 0
    )
    assert sorted(truths(out)) == ["GVideoQA-anet_0"]
    assert examples(load_report(rep), "too_short") == ["GVideoQA-anet_1", "GVideoQA-anet_3"]


def test_plm_video_clue_span_in_the_source_video(tmp_path, videos, zoomzero, easyr1_loads):
    fx = FIXTURES / "plm"
    root = videos("ego_vid1.mp4", "ego_vid2.mp4")
    out, rep = tmp_path / "plm.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "plm-video",
            "--input",
            fx / "plm_fgqa.jsonl",
            "--durations",
            fx / "durations.json",
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
    assert got["fgqa_0001"] == {
        "source": "plm-video",
        "source_video_id": "ego_vid1",
        "source_dataset": "ego4d",
        "question_type": "how",
        "segment": "segment_0001.mp4",
        "answer": "B",
        "options": ["With a fist around the handle", "With the index finger on the spine"],
        "spans": [[30.5, 42.0]],
        "duration": 120.0,
        "qid": "fgqa_0001",
        "question": "How does the person hold the knife while slicing the onion?",
        "_video": [str(root / "ego_vid1.mp4")],
    }
    assert got["fgqa_0002"]["answer"] == "A" and got["fgqa_0002"]["duration"] == 64.5
    report = load_report(rep)
    assert report["skipped"] == {"span_outside_video": 1, "no_options": 1}
    assert examples(report, "no_options") == ["fgqa_train_1"]
    easyr1_loads(out)


def test_plm_video_answer_index_counts_from_zero(tmp_path, zoomzero):
    """Four options A–D: index 0 is A and 3 (the last) is D; 4 and -1 are no option. Crafted rows."""
    options = {f"option_{i}": text for i, text in enumerate(["left hand", "right hand", "both hands", "a tool"])}
    meta = {"source_video_id": "v1", "source_start_time": 1.0, "source_end_time": 2.0}
    items = [
        {"qa_uid": f"q{k}", "question": "How?", "options": options, key: value, "metadata": meta}
        for k, (key, value) in enumerate(
            [("answer_index", 0), ("answer_index", 3), ("answer_idx", "2"), ("answer_index", 4), ("answer_index", -1)]
        )
    ]
    data, durations = tmp_path / "fgqa.jsonl", tmp_path / "durations.json"
    data.write_text("".join(json.dumps(i) + "\n" for i in items))
    durations.write_text(json.dumps({"v1": 10.0}))
    out, rep = tmp_path / "plm.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "plm-video",
            "--input",
            data,
            "--durations",
            durations,
            "--video-root",
            tmp_path,
            "--no-video-check",
            "--out",
            out,
            "--report",
            rep,
        )
        == 0
    )
    assert {q: t["answer"] for q, t in truths(out).items()} == {"q0": "A", "q1": "D", "q2": "C"}
    assert examples(load_report(rep), "answer_not_in_options") == ["q3", "q4"]


def test_videomme_probes_durations_and_needs_them_without_videos(tmp_path, videos, zoomzero, easyr1_loads):
    parquet = FIXTURES / "videomme/test-00000-of-00001.parquet"
    root = videos("fFjv93ACGo8.mp4", "crafted0002.mp4")
    out, rep = tmp_path / "videomme.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "videomme",
            "--input",
            parquet,
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
    assert got["001-1"]["options"] == ["Apples.", "Candles.", "Berries.", "The three kinds are of the same number."]
    assert (got["001-1"]["answer"], got["001-1"]["spans"], got["001-1"]["duration"]) == ("C", [], CLIP_SECONDS)
    assert got["001-2"]["duration_category"] == "short" and got["001-2"]["task_type"] == "Information Synopsis"
    assert load_report(rep)["skipped"] == {"answer_not_in_options": 1}
    easyr1_loads(out)
    # The converted rows feed Video-MME's Short column: one right (001-1) and one wrong (001-2) answer, both short;
    # a reply naming no letter among A-D ("Z") leaves the column's denominator, as the official script counts it.
    from zoomzero_plugin.eval.metrics import score_predictions, truths_from_rows

    wrong = next(x for x in "ABCD" if x != got["001-2"]["answer"])
    preds = [{"qid": "001-1", "answer": "C", "spans": []}, {"qid": "001-2", "answer": wrong, "spans": []}]
    metrics = score_predictions("videomme", preds, truths_from_rows(read_rows(out)))
    assert metrics["Acc[duration_category=short]"] == 50.0
    preds[1]["answer"] = "Z"
    metrics = score_predictions("videomme", preds, truths_from_rows(read_rows(out)))
    assert metrics["Acc[duration_category=short]"] == 100.0 and metrics["no_answer"] == 1
    # Annotations have only 'short'/'medium'/'long': without videos the seconds must come from --durations.
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "videomme",
        "--input",
        parquet,
        "--video-root",
        root,
        "--no-video-check",
        "--out",
        tmp_path / "none.jsonl",
        "--report",
        rep,
    )
    assert code == 2 and not (tmp_path / "none.jsonl").exists()
    assert load_report(rep)["skipped"] == {"unknown_duration": 2, "answer_not_in_options": 1}
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"fFjv93ACGo8": 178.4}))
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "videomme",
            "--input",
            parquet,
            "--video-root",
            root,
            "--no-video-check",
            "--durations",
            durations,
            "--out",
            out,
        )
        == 0
    )
    assert {t["duration"] for t in truths(out).values()} == {178.4}


def test_mlvu_task_folders_and_text_answers(tmp_path, videos, zoomzero, easyr1_loads):
    fx = FIXTURES / "mlvu/json"
    root = videos("7_topic_reasoning/AWA-6.mp4", "topic_reasoning/movie101_10.mp4")
    out, rep = tmp_path / "mlvu.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "mlvu",
            "--input",
            fx / "7_topic_reasoning.json",
            "--input",
            fx / "4_count.json",
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
    assert got["7_topic_reasoning_0"] == {
        "source": "mlvu",
        "task": "topic_reasoning",
        "question_type": "topic_reasoning",
        "video_file": "AWA-6.mp4",
        "answer": "A",
        "options": ["Grassland", "Lake", "Ocean", "Desert"],
        "spans": [],
        "duration": 450.0,
        "qid": "7_topic_reasoning_0",
        "question": "What is the main background of the video?",
        "_video": [str(root / "7_topic_reasoning/AWA-6.mp4")],
    }
    assert got["7_topic_reasoning_1"]["_video"] == [str(root / "topic_reasoning/movie101_10.mp4")]
    assert got["7_topic_reasoning_1"]["answer"] == "B"
    report = load_report(rep)
    assert report["skipped"] == {"answer_not_in_options": 1, "missing_video": 1}
    assert examples(report, "missing_video") == ["4_count_0"]
    easyr1_loads(out)


def test_lvbench_inline_options_and_durations(tmp_path, videos, zoomzero, easyr1_loads):
    meta = FIXTURES / "lvbench/video_info.meta.jsonl"
    root = videos("crafted_lvb1.mp4")
    out, rep = tmp_path / "lvbench.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data", "convert", "--from", "lvbench", "--input", meta, "--video-root", root, "--out", out, "--report", rep
        )
        == 0
    )
    got = truths(out)
    assert got["101"]["question"] == "What year appears in the opening caption of the video?"
    assert (got["101"]["options"], got["101"]["answer"]) == (["1636", "1366", "1363", "1633"], "A")
    assert got["101"]["duration"] == CLIP_SECONDS  # the video is there: its decoded length beats whole minutes
    assert got["103"]["question"] == "Why does the narrator mention the river at 12:30?"
    assert got["103"]["options"][-1] == "it is rerouted" and got["103"]["time_reference"] == "12:30-12:45"
    assert load_report(rep)["skipped"] == {"no_options": 1}
    easyr1_loads(out)
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "lvbench",
            "--input",
            meta,
            "--video-root",
            root,
            "--no-video-check",
            "--out",
            out,
        )
        == 0
    )
    assert {t["duration"] for t in truths(out).values()} == {4014.0}  # 66.9 minutes


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "nextgqa", "--input", "val.csv"], "needs --input"),
        (["--from", "cgbench", "--input", "x.json", "--gsub", "g.json"], "does not read --gsub"),
        (["--from", "cgbench", "--input", "nowhere.json"], "nowhere.json"),
        (["--from", "cgbench", "--input", "x.json", "--out", "rows.csv"], "--out must end in"),
    ],
)
def test_convert_usage_errors_are_clear(tmp_path, zoomzero, capsys, argv, message):
    for name, text in (("x.json", "[]"), ("g.json", "{}"), ("val.csv", "video_id\n")):
        (tmp_path / name).write_text(text)
    argv = [str(tmp_path / a) if a.endswith((".json", ".csv")) else a for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "o.jsonl")]
    assert zoomzero("data", "convert", *argv, "--video-root", tmp_path) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_convert_help_names_every_format_and_its_files(zoomzero, capsys):
    from zoomzero_plugin.data.formats import FORMATS

    with pytest.raises(SystemExit):
        zoomzero("data", "convert", "--help")
    text = " ".join(capsys.readouterr().out.split())
    for name, fmt in FORMATS.items():
        assert f"{name}: {fmt.title}" in text
    for upstream in (
        "gsub_{val,test}.json",
        "map_vid_vidorID.json",
        "rextime_{val,test}.jsonl",
        "cgbench_mini.json",
        "plm_fgqa_test.parquet",
        "videomme/test-00000-of-00001.parquet",
        "MLVU/json",
        "video_info.meta.jsonl",
    ):
        assert upstream in text


def test_progress_bar_and_no_half_file_on_failure(tmp_path, monkeypatch, capsys):
    from zoomzero_plugin.data import pipeline
    from zoomzero_plugin.data.formats import FORMATS
    from zoomzero_plugin.rows import write_rows

    fmt = FORMATS["cgbench"]({"input": [FIXTURES / "cgbench/cgbench_mini.json"]})
    options = pipeline.Options(video_roots=(tmp_path,), check_videos=False)
    rows, report = pipeline.convert(fmt, options, progress=True)
    assert "convert cgbench" in capsys.readouterr().err and len(rows) == report.written == 3
    out = tmp_path / "rows.jsonl"
    write_rows(out, rows)
    before = out.read_bytes()
    with pytest.raises(TypeError):
        write_rows(out, rows + [{"prompt": object()}])
    assert out.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]
