"""Property tests: a malformed upstream item is a skip with a known reason, never a crash; rows that come
out satisfy the row contract; the checker never raises on any row."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from zoomzero_plugin.data import pipeline
from zoomzero_plugin.data.check import check_row, tolerance
from zoomzero_plugin.data.formats import FORMATS, REASONS, Draft, Skip
from zoomzero_plugin.data.formats.base import letter, letter_of_text, strip_labels
from zoomzero_plugin.data.formats.lvbench import split_question
from zoomzero_plugin.data.formats.mcq_table import parse_columns
from zoomzero_plugin.ground_truth import LETTERS, GroundTruth

from .conftest import FIXTURES

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["A", "(B)", "c.", "12.5", "", "happy"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)
spans = st.lists(st.one_of(st.tuples(st.floats(-5, 200), st.floats(-5, 200)), json_values), max_size=4)

# Each format on its fixture: random edits of a valid item exercise both the success and the skip paths.
INPUTS = {
    "nextgqa": {
        "input": ["nextgqa/val.csv"],
        "gsub": ["nextgqa/gsub_val.json"],
        "video_map": ["nextgqa/map_vid_vidorID.json"],
    },
    "rextime": {"input": ["rextime/rextime_val.jsonl"], "options": ["rextime/rextime_val_release.json"]},
    "cgbench": {"input": ["cgbench/cgbench_mini.json"]},
    "gqa-json": {"input": ["gqa/GVideoQA-anet.json"]},
    "plm-video": {"input": ["plm/plm_fgqa.jsonl"]},
    "videomme": {"input": ["videomme/test-00000-of-00001.parquet"]},
    "mlvu": {"input": ["mlvu/json/7_topic_reasoning.json"]},
    "lvbench": {"input": ["lvbench/video_info.meta.jsonl"]},
    "rextime-test": {"input": ["rextime/rextime_test_release.json"]},
    "mcq-table": {"input": ["mcq_table/mcq_table.jsonl"]},
    "longvideobench": {"input": ["longvideobench/lvb_val.json", "longvideobench/lvb_val_flat.jsonl"]},
}
COLUMNS = {
    "mcq-table": parse_columns(
        "video=vid,question=q,options=choices,answer=gt,start=clue.t0,end=clue.t1,duration=duration"
    )
}
DELETE = object()
edits = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "video_id",
                "qid",
                "question",
                "answer",
                "a0",
                "a2",
                "frame_count",
                "vid",
                "q",
                "gt",
                "choices",
                "clue",
                "options",
                "ans",
                "relevant_windows",
                "duration",
                "choices",
                "right_answer",
                "clue_intervals",
                "video",
                "glue",
                "answer_index",
                "metadata",
                "videoID",
                "question_id",
                "candidates",
                "key",
                "uid",
                "video_uid",
                "video_info",
                "id",
                "video_path",
                "correct_choice",
                "option0",
                "option3",
            ]
        ),
        st.one_of(st.just(DELETE), json_values, spans),
    ),
    max_size=3,
)


def edited(record, changes):
    if not isinstance(record, dict):
        return record
    record = dict(record)
    for key, value in changes:
        if value is DELETE:
            record.pop(key, None)
        elif key in record or len(changes) == 1:
            record[key] = value
    return record


def loaded(name: str):
    inputs = {k: [FIXTURES / p for p in v] for k, v in INPUTS[name].items()}
    fmt = FORMATS[name](inputs, columns=COLUMNS[name]) if name in COLUMNS else FORMATS[name](inputs)
    return fmt, fmt.items()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(FORMATS)), index=st.integers(0, 5), changes=edits, data=st.data())
def test_drafts_are_total(name, index, changes, data):
    fmt, all_items = loaded(name)
    item = all_items[index % len(all_items)]
    if isinstance(item, tuple):  # (stem, index, row) or (video record, qa)
        item = tuple(edited(part, changes) if isinstance(part, dict) else part for part in item)
    else:
        item = edited(item, changes) if data.draw(st.booleans()) else data.draw(json_values)
    qid = fmt.qid(item)
    assert qid is None or isinstance(qid, str)
    try:
        draft = fmt.draft(item)
    except Skip as skip:
        assert skip.reason in REASONS
        return
    assert isinstance(draft, Draft) and draft.answer in LETTERS[: len(draft.options)] and len(draft.options) >= 2
    assert draft.qid == qid


@settings(max_examples=200, deadline=None)
@given(raw=spans, duration=st.floats(0.5, 300), tol=st.floats(0, 3))
def test_span_checks_keep_spans_inside_the_video(raw, duration, tol):
    report = pipeline.Report(format="x")
    try:
        out = pipeline._spans(raw, duration, tol, report)
    except Skip as skip:
        assert skip.reason in ("invalid_span", "span_outside_video")
        return
    assert all(0 <= s <= e <= duration for s, e in out) and len(out) == len(raw)


class _OneItem:
    """A format whose single item is given: drives the whole pipeline with arbitrary drafts."""

    name = "fuzz"

    def __init__(self, draft):
        self._draft = draft

    def items(self):
        return [0]

    def qid(self, item):
        return None

    def draft(self, item):
        return self._draft


@settings(max_examples=150, deadline=None)
@given(
    options=st.lists(st.text(min_size=1, max_size=6), min_size=2, max_size=6),
    answer=st.integers(0, 7),
    duration=st.one_of(st.none(), st.floats(allow_nan=True), st.floats(0.1, 500)),
    raw=spans,
    extra=st.dictionaries(st.sampled_from(["video", "qid", "type", "prompt", "x"]), scalars, max_size=3),
)
def test_pipeline_rows_satisfy_the_contract(options, answer, duration, raw, extra):
    draft = Draft(
        qid="q",
        question="Why?",
        options=options,
        answer=LETTERS[min(answer, len(options) - 1)],
        videos=("v",),
        duration=duration,
        spans=raw,
        extra=extra,
    )
    opts = pipeline.Options(video_roots=(Path("/videos"),), check_videos=False)
    rows, report = pipeline.convert(_OneItem(draft), opts, progress=False)
    assert len(rows) + sum(report.skipped.values()) == 1
    for row in rows:
        truth = GroundTruth.parse(row["answer"])
        assert row["videos"] == ["/videos/v.mp4"] and row["prompt"].count("<video>") == 1
        assert all(0 <= s <= e <= truth.duration for s, e in truth.spans)
        assert math.isfinite(truth.duration) and truth.duration > 0


@settings(max_examples=200, deadline=None)
@given(
    row=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"prompt": json_values, "videos": json_values, "answer": st.one_of(json_values, json_values.map(str))}
        ),
    )
)
def test_check_row_is_total(row):
    info = check_row(row, ("prompt", "videos", "answer"), tolerance("1"), "f:1")
    assert isinstance(info.qid, str) and all(p.check for p in info.problems)


@given(texts=st.lists(st.text(min_size=1, max_size=8).filter(lambda t: t.strip()), min_size=2, max_size=8))
def test_labels_and_letters_round_trip(texts):
    labelled = [f"({LETTERS[i]}) {t}" for i, t in enumerate(texts)]
    assert strip_labels(labelled) == [t.strip() for t in texts]
    for i in range(len(texts)):
        assert letter(f"({LETTERS[i]})", texts) == LETTERS[i] == letter(i, texts)
        first_match, matches = letter_of_text(texts[i], texts)
        assert first_match == matches[0] and LETTERS[i] in matches and texts[LETTERS.index(first_match)] == texts[i]


one_line = st.text(min_size=1, max_size=12).filter(lambda t: t.strip() and t.splitlines() == [t])


@given(
    question=one_line.filter(lambda t: not t.lstrip().startswith("(")),
    options=st.lists(one_line, min_size=2, max_size=5),
)
def test_lvbench_question_split(question, options):
    text = question + "\n" + "\n".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(options))
    try:
        q, opts = split_question(text)
    except Skip as skip:
        assert skip.reason in REASONS
        return
    assert q == question.strip() and opts == [o.strip() for o in options]
