"""Hypothesis fuzzing of the parser and the rewards: 10,000+ generated responses per run."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.gvqa_reward import compute_score
from zoomzero_plugin.gvqa.parsing import glue_char_ranges, parse_response
from zoomzero_plugin.gvqa.reward import COMPONENTS, RewardConfig, score_response

from .helpers import iou_oracle, within_seconds

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e309", "-0", ".5", "5.", "1e-400", "9" * 400, "0x10", "１２"]),
)
FRAGMENTS = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<answer>",
        "</answer>",
        "<glue>",
        "</glue>",
        "<time>",
        "</time>",
        "[",
        "]",
        "(",
        ")",
        ",",
        " ",
        "\n",
        "A",
        "B",
        "(C)",
        "e",
        "-",
        "<",
        ">",
        "/",
        "<answer>D</answer>",
        "<glue>[(",
        ")]</glue>",
    ]
)
PIECES = st.one_of(FRAGMENTS, NUMBERS, st.text(max_size=8))
RESPONSES = st.one_of(
    st.lists(PIECES, max_size=40).map("".join),
    st.text(max_size=200),
    st.tuples(FRAGMENTS, st.integers(1, 5000)).map(lambda t: t[0] * t[1]),
)


def _template(think, letter, spans):
    glue = ", ".join(f"({s}, {e})" for s, e in spans)
    return f"<think>{think}</think><answer>{letter}</answer><glue>[{glue}]</glue>"


TEMPLATED = st.builds(
    _template,
    st.text(max_size=30).filter(lambda t: "<" not in t),
    st.sampled_from("ABCDEZ"),
    st.lists(st.tuples(NUMBERS, NUMBERS), max_size=4),
)

TRUTH = GroundTruth.parse(
    {"answer": "B", "options": ["w", "x", "y", "z"], "spans": [[2, 5], [7, 9]], "duration": 12.0, "qid": "q"}
)
ALL = RewardConfig(components=COMPONENTS)


@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(RESPONSES, TEMPLATED), st.one_of(st.none(), st.floats(0.1, 1e4)))
def test_parser_is_total_and_spans_are_sane(text, duration):
    p = parse_response(text, duration)
    for s, e in p.spans:
        assert math.isfinite(s) and math.isfinite(e) and 0 <= s < e
        if duration is not None:
            assert e <= duration
    assert list(p.spans) == sorted(p.spans)
    assert all(p.spans[i][1] < p.spans[i + 1][0] for i in range(len(p.spans) - 1))
    assert p.answer is None or (len(p.answer) == 1 and p.answer.isupper())
    if p.format_ok:
        assert p.spans and p.answer and p.matches_template
    for lo, hi in glue_char_ranges(text):
        assert text.startswith("<glue>", lo) and lo < hi <= len(text)


@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(RESPONSES, TEMPLATED), st.one_of(st.none(), st.sampled_from("ABZ")))
def test_every_reward_is_in_unit_interval(text, zoom_answer):
    scores = score_response(text, TRUTH, ALL, zoom_answer=zoom_answer)
    assert set(scores) == set(COMPONENTS) | {"overall"}
    assert all(0.0 <= v <= 1.0 and math.isfinite(v) for v in scores.values())
    assert scores["format"] in (0.0, 1.0) and scores["accuracy"] in (0.0, 1.0)
    # zoom depends on nothing but the zoom answer (DESIGN: Rewards)
    assert scores["zoom"] == float(zoom_answer == "B")
    assert scores["overall"] == pytest.approx(sum(scores[k] for k in COMPONENTS) / len(COMPONENTS))


HALVES = st.integers(0, 23).map(lambda k: k / 2)  # starts 0 … 11.5 s in the 12 s video: always valid


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.tuples(HALVES, st.integers(1, 16).map(lambda k: k / 2)), max_size=5),
    st.sampled_from("ABCZ"),
    st.one_of(st.none(), st.sampled_from("ABZ")),
)
def test_rewards_of_templated_responses_follow_their_definitions(spans, letter, zoom_answer):
    """Expected values from DESIGN's definitions with an independent IoU (elementary segments, not the
    project's merge-and-sweep): spans that start inside the video are valid and clamped to it."""
    spans = [(s, s + w) for s, w in spans]
    text = _template("looking", letter, spans)
    scores = score_response(text, TRUTH, ALL, zoom_answer=zoom_answer)
    expected = {
        "format": float(bool(spans)),  # an empty list is glue_empty
        "iou": iou_oracle(spans, TRUTH.spans, TRUTH.duration),
        "accuracy": float(letter == "B"),
        "zoom": float(zoom_answer == "B"),
    }
    expected["overall"] = sum(expected.values()) / 4
    assert scores == pytest.approx(expected, abs=1e-12)


# Truth: B, spans (2, 5) and (7, 9) of a 12 s video (5 s in all). Every expected value worked out by hand.
BY_HAND = [
    ("<think>x</think><answer>B</answer><glue>[(2, 5), (7, 9)]</glue>", (1, 1, 1)),
    ("<think>x</think><answer>A</answer><glue>[(3, 4)]</glue>", (1, 1 / 5, 0)),  # 1 s of 5
    ("<think>x</think><answer>B</answer><glue>[(0, 12)]</glue>", (1, 5 / 12, 1)),
    ("<think>x</think><answer>B</answer><glue>[(4, 8)]</glue>", (1, 2 / 7, 1)),  # ∩ 1 + 1, ∪ 4 + 5 − 2
    ("<think>x</think><answer>C</answer><glue>[(5, 7)]</glue>", (1, 0, 0)),  # touches both, overlaps neither
    ("<think>x</think><answer>B</answer><glue>[(2, 5), (3, 20)]</glue>", (1, 5 / 10, 1)),  # clamped: (2, 12)
    ("<think>x</think><answer>B</answer><glue>[(2, 5), (9, 7)]</glue>", (0, 3 / 5, 1)),  # a reversed pair
    ("<think>x</think><answer>B</answer><glue>[(2, 5)", (0, 0, 1)),  # cut short: no glue block
    ("<answer>B</answer>", (0, 0, 1)),
    ("", (0, 0, 0)),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, len(BY_HAND) - 1), min_size=1, max_size=8))
def test_batch_reward_function_scores_each_response_as_worked_out_by_hand(picks):
    texts = [BY_HAND[i][0] for i in picks]
    inputs = [{"response": t, "response_length": len(t), "ground_truth": TRUTH.to_json()} for t in texts]
    out = compute_score(inputs, components="format,iou,accuracy")
    assert len(out) == len(texts)
    for i, scores in zip(picks, out):
        fmt, iou_, acc = BY_HAND[i][1]
        assert scores == pytest.approx({"format": fmt, "iou": iou_, "accuracy": acc, "overall": (fmt + iou_ + acc) / 3})
    json.dumps(out)  # plain floats, loggable


# Degenerate repetitions (RL policies loop until the token limit): a few fragments, each repeated up to 60k times.
LONG = st.lists(st.tuples(st.one_of(FRAGMENTS, NUMBERS), st.integers(1, 60_000)), min_size=1, max_size=4).map(
    lambda parts: "".join(piece * n for piece, n in parts)
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(LONG, st.one_of(st.none(), st.floats(0.1, 1e4)))
def test_parser_is_total_on_long_repetitions(text, duration):
    with within_seconds(10):  # a hang guard (linear parsing takes milliseconds); not a speed target
        p = parse_response(text, duration)
        ranges = glue_char_ranges(text)
    assert all(0 <= s < e for s, e in p.spans) and list(p.spans) == sorted(p.spans)
    assert p.format_ok == (p.matches_template and p.glue_parsed and bool(p.spans) and p.invalid_spans == 0)
    assert all(text.startswith("<glue>", lo) for lo, _ in ranges)
