"""`zoomzero data convert --from mcq-table`: MCQ rows with clue spans from any table, the columns named by --columns
(the stage II PLM-Video-Auto YT-1B MCQA split's card could not be read, so nothing about its columns is assumed)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zoomzero_plugin.data.formats.mcq_table import parse_columns
from zoomzero_plugin.rows import read_rows

# Column names chosen to be unlike any real release: the converter must take them from --columns.
TABLE = [
    {
        "vid": "a1",
        "q": "What is poured?",
        "choices": ["milk", "water", "oil", "juice"],
        "gt": 1,
        "clue": {"t0": 0.5, "t1": 2.0},
    },
    {
        "vid": "a2",
        "q": "How many cups?",
        "choices": ["2", "3", "1", "4"],
        "gt": 3,  # 3 is an option's text: (B)
        "clue": {"t0": 1.0, "t1": 3.5},
    },
    {"vid": "a3", "q": "Where?", "choices": ["desk", "sink"], "gt": 7, "clue": {"t0": 0.0, "t1": 1.0}},  # no option 7
]
COLUMNS = "video=vid,question=q,options=choices,answer=gt,start=clue.t0,end=clue.t1"


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "yt1b_mcqa.parquet"
    pq.write_table(pa.Table.from_pylist(TABLE), path)
    return path


def test_rows_from_named_columns(tmp_path, table, videos, zoomzero, easyr1_loads):
    root = videos("a1.mp4", "a2.mp4", "a3.mp4")
    out, rep = tmp_path / "plm.jsonl", tmp_path / "report.json"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "mcq-table",
            "--input",
            table,
            "--columns",
            COLUMNS,
            "--video-root",
            root,
            "--out",
            out,
            "--report",
            rep,
        )
        == 0
    )
    rows = read_rows(out)
    truths = {json.loads(r["answer"])["qid"]: json.loads(r["answer"]) for r in rows}
    assert sorted(truths) == ["yt1b_mcqa_0", "yt1b_mcqa_1"]
    assert truths["yt1b_mcqa_0"]["answer"] == "B" and truths["yt1b_mcqa_0"]["spans"] == [[0.5, 2.0]]
    assert truths["yt1b_mcqa_1"]["answer"] == "B"  # "3" is the text of option B, not index 3
    assert truths["yt1b_mcqa_1"]["options"] == ["2", "3", "1", "4"] and truths["yt1b_mcqa_1"]["duration"] == 4.0
    assert json.loads(rep.read_text())["skipped"] == {"answer_not_in_options": 1}
    # the paper's prompt by default
    assert rows[0]["prompt"].startswith(
        "<video>This video in total has 4.0 seconds. Answer the question: What is "
        "poured? according to the content of the video. Select the answer from: "
        "(A) milk (B) water (C) oil (D) juice\n\nOutput key information"
    )
    easyr1_loads(out)


def test_concise_prompt_is_a_named_option(tmp_path, table, zoomzero):
    out = tmp_path / "plm.jsonl"
    assert (
        zoomzero(
            "data",
            "convert",
            "--from",
            "mcq-table",
            "--input",
            table,
            "--columns",
            COLUMNS,
            "--video-root",
            tmp_path,
            "--no-video-check",
            "--durations",
            _durations(tmp_path),
            "--out",
            out,
            "--prompt",
            "concise",
        )
        == 0
    )
    assert read_rows(out)[0]["prompt"].startswith("<video>The video is 30.0 seconds long. Find the moments")


def _durations(tmp_path):
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"a1": 30.0, "a2": 30.0, "a3": 30.0}))
    return path


def test_a_column_the_file_lacks_names_the_files_columns(tmp_path, table, zoomzero, capsys):
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "mcq-table",
        "--input",
        table,
        "--columns",
        COLUMNS.replace("clue.t0", "clue.start"),
        "--video-root",
        tmp_path,
        "--no-video-check",
        "--out",
        tmp_path / "x.jsonl",
    )
    err = capsys.readouterr().err
    assert code == 2 and "no column 'clue.start' (--columns start=clue.start)" in err
    assert "vid, q, choices, gt, clue, clue.t0, clue.t1" in err
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "--from mcq-table needs --columns"),
        (("--columns", "video=vid,question=q"), "--columns must name options, answer"),
        (("--columns", COLUMNS + ",colour=c"), "--columns key 'colour' is unknown"),
        (("--columns", "video=vid,question=q,options=choices,answer=gt,start=clue.t0"), "start and end together"),
        (("--columns", "video"), "'video' is not KEY=COLUMN"),
    ],
)
def test_column_mistakes_are_one_line_errors(tmp_path, table, zoomzero, capsys, argv, message):
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "mcq-table",
        "--input",
        table,
        *argv,
        "--video-root",
        tmp_path,
        "--no-video-check",
        "--out",
        tmp_path / "x.jsonl",
    )
    assert code == 2 and message in capsys.readouterr().err


def test_columns_are_read_only_by_mcq_table(tmp_path, zoomzero, capsys):
    code = zoomzero(
        "data",
        "convert",
        "--from",
        "gqa-json",
        "--input",
        tmp_path / "x.json",
        "--columns",
        COLUMNS,
        "--video-root",
        tmp_path,
        "--out",
        tmp_path / "x.jsonl",
    )
    assert code == 2 and "does not read --columns" in capsys.readouterr().err


def test_options_from_several_columns_and_spans_from_a_list_column():
    columns = parse_columns("video=v,question=q,options=o1+o2+o3,answer=a,spans=s,qid=id")
    assert columns["options"] == "o1+o2+o3" and columns["spans"] == "s"
    with pytest.raises(ValueError, match="not both"):
        parse_columns("video=v,question=q,options=o,answer=a,spans=s,start=x,end=y")


def test_draft_from_several_option_columns_and_a_span_list(tmp_path):
    from zoomzero_plugin.data.formats.mcq_table import MCQTable

    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "q9",
                "v": "x.mp4",
                "q": "Which?",
                "o1": "red",
                "o2": "blue",
                "o3": "green",
                "a": "(C)",
                "s": [[1, 2], [5, 6.5]],
            }
        )
        + "\n"
    )
    fmt = MCQTable({"input": [path]}, parse_columns("video=v,question=q,options=o1+o2+o3,answer=a,spans=s,qid=id"))
    (item,) = fmt.items()
    draft = fmt.draft(item)
    assert (draft.qid, draft.options, draft.answer, list(draft.spans)) == (
        "q9",
        ["red", "blue", "green"],
        "C",
        [[1, 2], [5, 6.5]],
    )
    assert draft.videos == ("x.mp4",) and draft.video_id == "x"
