"""`zoomzero data convert` on damaged files and mistaken arguments: one line naming the file (and line) or the
argument, exit 2, and nothing written. Each case was once a traceback, a silently shorter table, or exit 0."""

from __future__ import annotations

import json

import pytest

from zoomzero_plugin.rows import read_rows

from .conftest import FIXTURES

NEXTGQA = FIXTURES / "nextgqa"


@pytest.fixture
def convert(tmp_path, zoomzero, capsys):
    """``convert(*argv)`` → (exit code, stderr); --out defaults to tmp/o.jsonl, videos unchecked."""

    def run(*argv):
        argv = [str(a) for a in argv]
        if "--out" not in argv:
            argv += ["--out", str(tmp_path / "o.jsonl")]
        if "--video-root" not in argv:
            argv += ["--video-root", str(tmp_path), "--no-video-check"]
        code = zoomzero("data", "convert", *argv)
        return code, capsys.readouterr().err

    return run


def nextgqa(csv, gsub=NEXTGQA / "gsub_val.json", video_map=NEXTGQA / "map_vid_vidorID.json"):
    return ["--from", "nextgqa", "--input", csv, "--gsub", gsub, "--video-map", video_map]


def failed(code, err, tmp_path, *needles):
    """Exit 2, every needle in a one-line message, no output file."""
    message = [line for line in err.splitlines() if line.startswith("zoomzero data convert: ")]
    assert code == 2 and len(message) == 1, err
    assert all(n in message[0] for n in needles), message[0]
    assert "Traceback" not in err and not (tmp_path / "o.jsonl").exists()
    return message[0]


def test_a_csv_cut_in_the_middle_of_a_row(tmp_path, convert):
    text = (NEXTGQA / "val.csv").read_text()
    cut = tmp_path / "val.csv"
    cut.write_text(text[: text.index("dismount his bicycle") + 5])  # line 3 ends "...,dismo"
    failed(*convert(*nextgqa(cut)), tmp_path, f"{cut}:3:", "cut short")


def test_a_short_row_names_file_and_line(tmp_path, convert):
    lines = (NEXTGQA / "val.csv").read_text().splitlines()
    short = tmp_path / "val.csv"
    short.write_text(
        "\n".join(lines[:3] + [lines[3][:40]] + lines[4:]) + "\n"
    )  # line 4 keeps 5 of 13 fields: "2482028659,643,640,480,why are there 2 p"
    failed(*convert(*nextgqa(short)), tmp_path, f"{short}:4:", "5 fields where the header has 13")


def test_a_long_row_names_file_and_line(tmp_path, convert):
    """One field more than the header's 13 (an unquoted comma in a question) was read as a shifted row."""
    lines = (NEXTGQA / "val.csv").read_text().splitlines()
    long = tmp_path / "val.csv"
    long.write_text("\n".join(lines[:3] + [lines[3] + ",extra"] + lines[4:]) + "\n")
    failed(*convert(*nextgqa(long)), tmp_path, f"{long}:4:", "14 fields where the header has 13", "long row")


PLM_META = {"source_video_id": "v1", "source_start_time": 1.0, "source_end_time": 2.0}


def plm_rows(tmp_path, id_column):
    """Two PLM-Video rows whose question id sits in ``id_column`` (None: no id column at all)."""
    items = [
        {
            **({id_column: f"q{k}"} if id_column else {}),
            "question": "How?",
            "options": ["a", "b"],
            "answer_index": k,
            "metadata": PLM_META,
        }
        for k in range(2)
    ]
    data = tmp_path / "fgqa.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in items))
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"v1": 10.0}))
    return ["--from", "plm-video", "--input", data, "--durations", durations]


def test_a_required_column_with_alternatives_is_checked(tmp_path, convert):
    """PLM-Video needs one of qa_uid, uid, qa_id: none of them stops the run, naming all three."""
    failed(
        *convert(*plm_rows(tmp_path, None)),
        tmp_path,
        "lacks column(s) qa_uid or uid or qa_id",
        "needs qa_uid|uid|qa_id, question, metadata",
    )


@pytest.mark.parametrize("id_column", ["uid", "qa_id"])
def test_any_one_alternative_of_a_required_column_is_enough(tmp_path, convert, id_column):
    code, err = convert(*plm_rows(tmp_path, id_column))
    assert code == 0, err
    assert sorted(
        r["qid"] if "qid" in r else json.loads(r["answer"])["qid"] for r in read_rows(tmp_path / "o.jsonl")
    ) == ["q0", "q1"]


def test_an_open_quote_is_malformed_csv(tmp_path, convert):
    text = (NEXTGQA / "val.csv").read_text()
    bad = tmp_path / "val.csv"
    bad.write_text(text.replace("what is on the table", '"what is on the table'))
    failed(*convert(*nextgqa(bad)), tmp_path, f"{bad}:", "malformed CSV")


def test_a_missing_option_column_stops_before_anything_is_written(tmp_path, convert):
    """Without a4 the questions answered by a4 were skipped and the rest got 4 options, with exit 0."""
    lines = (NEXTGQA / "val.csv").read_text().splitlines()
    no_a4 = tmp_path / "val.csv"
    no_a4.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")
    failed(*convert(*nextgqa(no_a4)), tmp_path, str(no_a4), "lacks column(s) a4", "a0, a1, a2, a3, a4")


def test_a_byte_order_mark_is_read(tmp_path, convert):
    """Excel's UTF-8 BOM once turned every row into a `missing field(s) ['video_id']` skip."""
    plain_out, bom_out, bom = tmp_path / "plain.jsonl", tmp_path / "bom.jsonl", tmp_path / "val.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + (NEXTGQA / "val.csv").read_bytes())
    assert convert(*nextgqa(NEXTGQA / "val.csv"), "--out", plain_out)[0] == 0
    assert convert(*nextgqa(bom), "--out", bom_out)[0] == 0
    assert read_rows(bom_out) == read_rows(plain_out) and len(read_rows(bom_out)) == 4
    gsub_bom = tmp_path / "gsub.json"  # the JSON companions too
    gsub_bom.write_bytes(b"\xef\xbb\xbf" + (NEXTGQA / "gsub_val.json").read_bytes())
    assert convert(*nextgqa(NEXTGQA / "val.csv", gsub=gsub_bom), "--out", bom_out)[0] == 0
    assert read_rows(bom_out) == read_rows(plain_out)


def test_swapped_gsub_and_video_map(tmp_path, convert):
    """Once: AttributeError: 'str' object has no attribute 'get'."""
    code, err = convert(
        *nextgqa(NEXTGQA / "val.csv", gsub=NEXTGQA / "map_vid_vidorID.json", video_map=NEXTGQA / "gsub_val.json")
    )
    failed(code, err, tmp_path, "--gsub", "map_vid_vidorID.json", "is it the --video-map file?")


@pytest.mark.parametrize(
    "content, needles",
    [
        ('{"fFjv93ACGo8": "three minutes"}', ["entry 'fFjv93ACGo8'", "expected seconds > 0"]),
        ('{"fFjv93ACGo8": -4}', ["entry 'fFjv93ACGo8' is -4"]),
        ("[178.4]", ["a JSON list, expected an object"]),
        ('{"fFjv93ACGo8": 178.4', ["durations.json:1:", "cut short"]),
    ],
)
def test_malformed_durations(tmp_path, convert, content, needles):
    durations = tmp_path / "durations.json"
    durations.write_text(content)
    code, err = convert(
        "--from", "videomme", "--input", FIXTURES / "videomme/test-00000-of-00001.parquet", "--durations", durations
    )
    failed(code, err, tmp_path, "--durations", *needles)


def test_outputs_are_checked_before_the_work(tmp_path, convert):
    (tmp_path / "folder.jsonl").mkdir()
    failed(
        *convert(*nextgqa(NEXTGQA / "val.csv"), "--out", tmp_path / "folder.jsonl"), tmp_path, "--out", "is a folder"
    )
    failed(
        *convert(*nextgqa(NEXTGQA / "val.csv"), "--out", NEXTGQA / "val.csv" / "o.jsonl"),
        tmp_path,
        "--out",
        "is a file, not a folder",
    )
    failed(
        *convert(*nextgqa(NEXTGQA / "val.csv"), "--report", tmp_path / "folder.jsonl"),
        tmp_path,
        "--report",
        "is a folder",
    )
    copy = tmp_path / "cg.json"
    copy.write_text((FIXTURES / "cgbench/cgbench_mini.json").read_text())
    failed(
        *convert("--from", "cgbench", "--input", copy, "--report", copy),
        tmp_path,
        "--report",
        "is also --input",
        "would be overwritten",
    )
    assert json.loads(copy.read_text()) == json.loads((FIXTURES / "cgbench/cgbench_mini.json").read_text())


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["--video-ext", ","], ["--video-ext", "names no extension"]),
        (["--workers", "0"], ["--workers must be >= 1"]),
        (["--span-tolerance", "-1"], ["--span-tolerance must be >= 0"]),
    ],
)
def test_bad_option_values(tmp_path, convert, argv, needles):
    failed(*convert("--from", "cgbench", "--input", FIXTURES / "cgbench/cgbench_mini.json", *argv), tmp_path, *needles)


def test_every_format_names_a_file_cut_short(tmp_path, convert):
    """A JSON, JSONL or parquet file cut at a third: its name, the line where it has lines, and 'cut short'."""
    cases = {
        "cgbench": (FIXTURES / "cgbench/cgbench_mini.json", ":", "cut short"),
        "rextime": (FIXTURES / "rextime/rextime_val.jsonl", ":L:", "cut short"),
        "gqa-json": (FIXTURES / "gqa/GVideoQA-anet.json", ":", "cut short"),
        "plm-video": (FIXTURES / "plm/plm_fgqa.jsonl", ":L:", "cut short"),
        "mlvu": (FIXTURES / "mlvu/json/4_count.json", ":", "cut short"),
        "lvbench": (FIXTURES / "lvbench/video_info.meta.jsonl", ":L:", "cut short"),
        "videomme": (FIXTURES / "videomme/test-00000-of-00001.parquet", "", "not a readable parquet file"),
    }
    for name, (source, where, what) in cases.items():
        data = source.read_bytes()[: len(source.read_bytes()) // 3]
        cut = tmp_path / f"cut_{name}{source.suffix}"
        cut.write_bytes(data)
        where = where.replace("L", str(data.count(b"\n") + 1))  # JSONL: the last line, the one cut
        failed(*convert("--from", name, "--input", cut), tmp_path, f"{cut}{where}", what)


@pytest.mark.parametrize(
    "name, source, drop, needle",
    [
        ("cgbench", "cgbench/cgbench_mini.json", "clue_intervals", "lacks column(s) clue_intervals"),
        ("gqa-json", "gqa/GVideoQA-anet.json", "options", "lacks column(s) options"),
        ("rextime", "rextime/rextime_val_release.json", "vid", "lacks column(s) vid"),
        ("mlvu", "mlvu/json/4_count.json", "question", "lacks column(s) question"),
    ],
)
def test_a_column_no_item_has_stops_the_run(tmp_path, convert, name, source, drop, needle):
    items = json.loads((FIXTURES / source).read_text())
    for item in items:
        item.pop(drop, None)
    path = tmp_path / "in.json"
    path.write_text(json.dumps(items))
    failed(*convert("--from", name, "--input", path), tmp_path, str(path), needle, f"--from {name} needs")


def test_a_jsonl_line_that_is_not_an_object(tmp_path, convert):
    lines = (FIXTURES / "rextime/rextime_val.jsonl").read_text().splitlines()
    path = tmp_path / "val.jsonl"
    path.write_text("\n".join(lines[:2] + ["[1, 2]"] + lines[2:]) + "\n")
    failed(
        *convert("--from", "rextime", "--input", path, "--options", FIXTURES / "rextime/rextime_val_release.json"),
        tmp_path,
        f"{path}:3:",
        "a JSON list, expected an object",
    )


def test_rextime_options_file_without_options(tmp_path, convert):
    repo = FIXTURES / "rextime/rextime_val.jsonl"  # the repo's file has no options: a likely mix-up
    failed(
        *convert("--from", "rextime", "--input", repo, "--options", repo),
        tmp_path,
        "--options",
        "no row has both 'qid' and 'options'",
    )
