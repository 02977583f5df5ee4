"""Property tests: metrics stay bounded on any input; the reductions agree where they must."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.answers import ALL_LETTERS, REPLY, letter_of
from zoomzero_plugin.eval.metrics import BENCHMARKS, REDUCTION_CHOICES, score_predictions
from zoomzero_plugin.eval.predictions import read_predictions, to_prediction
from zoomzero_plugin.ground_truth import GroundTruth

COUNT_KEYS = {
    "questions",
    "predicted",
    "missing",
    "duplicates",
    "no_answer",
    "invalid_spans",
    "scored_accuracy",
    "scored_grounding",
    "scored_both",
}

seconds = st.floats(0, 200, allow_nan=False, allow_infinity=False)
junk = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.integers(-5, 500),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(seconds, max_size=3),
)
span_item = st.one_of(st.tuples(seconds, seconds).map(list), junk)


@st.composite
def truth_st(draw, qid):
    duration = draw(st.floats(1, 200))
    raw = draw(st.lists(st.tuples(st.floats(0, duration * 0.99), st.floats(0, 50)), max_size=3))
    return GroundTruth.parse(
        {
            "qid": qid,
            "answer": draw(st.sampled_from("ABCD")),
            "options": list("abcd"),
            "duration": duration,
            "spans": [[s, min(s + w, duration)] for s, w in raw],
            "task_type": draw(st.sampled_from(["x", "y"])),
        }
    )


@st.composite
def problem(draw):
    n = draw(st.integers(1, 6))
    truths = {f"q{i}": draw(truth_st(f"q{i}")) for i in range(n)}
    preds = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "qid": st.sampled_from(sorted(truths)),
                    "answer": st.one_of(st.none(), st.sampled_from("ABCDab"), st.text(max_size=4)),
                    "spans": st.one_of(st.none(), st.lists(span_item, max_size=4)),
                }
            ),
            max_size=8,
        )
    )
    return truths, preds


@settings(max_examples=150, deadline=None)
@given(problem(), st.sampled_from(sorted(BENCHMARKS)), st.sampled_from(REDUCTION_CHOICES))
def test_metrics_are_bounded_and_counts_consistent(case, benchmark, reduction):
    truths, preds = case
    m = score_predictions(benchmark, preds, truths, reduction)
    for key, value in m.items():
        if key in COUNT_KEYS or key.startswith("n["):
            assert isinstance(value, int) and value >= 0, key
        else:
            assert 0.0 <= value <= 100.0 + 1e-9, (key, value)
    assert m["predicted"] + m["missing"] == m["questions"] == len(truths)
    assert m["predicted"] + m["duplicates"] == len(preds)


@st.composite
def rextime_problem(draw):
    """Predictions whose letters and first spans read plainly: answers A–D in either case or none, spans
    as [s, e] lists (possibly reversed) or none at all; some questions predicted twice, some not at all."""
    n = draw(st.integers(1, 6))
    truths = {f"q{i}": draw(truth_st(f"q{i}")) for i in range(n)}
    preds = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "qid": st.sampled_from(sorted(truths)),
                    "answer": st.one_of(st.none(), st.sampled_from("ABCDabcd")),
                    "spans": st.lists(st.tuples(seconds, seconds).map(list), max_size=3),
                }
            ),
            max_size=8,
        )
    )
    return truths, preds


@settings(max_examples=200, deadline=None)
@given(rextime_problem())
def test_rextime_metrics_follow_the_official_definition(case):
    """rextime_eval.py: every question counts (a missing one scores 0; grounding over the questions that have
    spans); the last record of a question is its prediction; IoU of the FIRST predicted window against the
    best ground-truth window = max(0, overlap) / hull; a reversed window scores 0; R1@t and Acc@IoU>=t count
    IoU >= t."""
    truths, preds = case
    last = {p["qid"]: p for p in preds}
    correct, grounded = [], []  # grounded: (correct, IoU) of the questions with spans
    for qid, t in truths.items():
        p = last.get(qid)
        letter = p["answer"].upper() if p and p["answer"] else None
        correct.append(letter == t.answer)
        best = 0.0
        if p and p["spans"] and p["spans"][0][0] <= p["spans"][0][1]:
            s, e = p["spans"][0]
            for ws, we in t.spans:
                overlap, hull = min(e, we) - max(s, ws), max(e, we) - min(s, ws)
                best = max(best, overlap / hull if overlap > 0 and hull > 0 else 0.0)
        if t.spans:
            grounded.append((correct[-1], best))
    m = score_predictions("rextime", preds, truths, "official")
    assert m["Acc"] == pytest.approx(100 * sum(correct) / len(truths))
    g = max(len(grounded), 1)  # no grounded question: 0, not nan
    assert m["mIoU"] == pytest.approx(100 * sum(i for _, i in grounded) / g)
    for t in (0.3, 0.5, 0.7):
        assert m[f"R1@{t}"] == pytest.approx(100 * sum(i >= t for _, i in grounded) / g)
        assert m[f"Acc@IoU>={t}"] == pytest.approx(100 * sum(c and i >= t for c, i in grounded) / g)


@st.composite
def single_span_case(draw):
    duration = draw(st.floats(10, 500))
    s = draw(st.floats(0, duration - 1))
    gt = (s, draw(st.floats(s + 0.5, duration)))
    ps = draw(st.floats(0, duration - 1))
    p = (ps, draw(st.floats(ps + 0.01, duration)))
    t = GroundTruth.parse({"qid": "q", "answer": "A", "options": ["a", "b"], "spans": [gt], "duration": duration})
    return {"q": t}, [{"qid": "q", "answer": draw(st.sampled_from(["A", "B", None])), "spans": [list(p)]}]


@settings(max_examples=150, deadline=None)
@given(single_span_case(), st.sampled_from(["nextgqa", "rextime", "cgbench", "rows"]))
def test_official_and_union_agree_on_single_span_predictions(case, benchmark):
    """One valid in-video span against one ground-truth span: every rule measures the same thing."""
    truths, preds = case
    official = score_predictions(benchmark, preds, truths, "official")
    united = score_predictions(benchmark, preds, truths, "union")
    assert official.keys() == united.keys()
    for key in official:
        assert abs(official[key] - united[key]) < 1e-9, key


json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=10,
)


# Answers whose letter the package's REPLY rule reads is known by construction: (text, letter or None).
LETTER_ANSWERS = st.one_of(
    # an upper-case letter may be followed by ".", ":", "," or words; a lower-case one only stands alone (a period
    # after it allowed: "b.")
    st.builds(
        lambda pad, letter, wrap, tail: (
            f"{pad}{wrap[0]}{letter}{wrap[1]}{tail}",
            letter.upper() if letter.isupper() or tail.strip() in ("", ".") else None,
        ),
        st.sampled_from(["", " ", "\n"]),
        st.sampled_from("ABCDEZabz"),
        st.sampled_from([("", ""), ("(", ")")]),
        st.sampled_from(["", ".", ". a red cup", ":", ",", " "]),
    ),
    st.sampled_from([("Bob", None), ("12", None), ("", None), ("B)x", "B"), ("AB", None), ("maybe", None)]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["spans", "extra"]), json_value),
    json_value,
    LETTER_ANSWERS,
    st.one_of(st.floats(allow_nan=False), st.integers(-5, 5), st.none(), st.lists(st.integers(), max_size=2)),
)
def test_any_record_with_a_qid_normalises(fields, qid, answer, confidence):
    if qid is None:
        qid = 0
    text, letter = answer
    p = to_prediction({**fields, "qid": qid, "answer": text, "confidence": confidence})
    assert p.qid == str(qid) and p.answer == text  # kept as written; its letter is read when scored
    assert letter_of(p.answer, ALL_LETTERS, REPLY) == letter
    spans = fields.get("spans")
    assert p.spans == (tuple(spans) if isinstance(spans, list) else ())  # kept as written, unvalidated
    assert p.confidence == (float(confidence) if isinstance(confidence, (int, float)) else None)
    assert to_prediction({"qid": qid, "answer": 2}).answer is None  # not text: names no letter


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries({"qid": st.text(min_size=1, max_size=4), "answer": st.sampled_from("AB")}),
        min_size=1,
        max_size=5,
    ),
    st.integers(1, 30),
)
def test_a_truncated_last_line_is_dropped(tmp_path_factory, records, cut):
    path = tmp_path_factory.mktemp("p") / "predictions.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in records)
    last = json.dumps({"qid": "in-flight", "answer": "A", "spans": [[1, 2]]})
    path.write_text(text + last[: min(cut, len(last) - 1)])
    assert read_predictions(path) == records
