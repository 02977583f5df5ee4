import math

import pytest
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.spans import (
    check_span,
    clean_spans,
    intersection_length,
    iog,
    iop,
    iou,
    merge_spans,
    total_length,
    widen_spans,
)


@pytest.mark.parametrize(
    "span, duration, reason",
    [
        ((1, 2), None, None),
        ((0, 0), None, None),
        ((float("nan"), 2), None, "not_finite"),
        ((1, float("inf")), None, "not_finite"),
        ((-1, 2), None, "negative"),
        ((3, 2), None, "reversed"),
        ((1, 2e7), None, "absurd"),
        ((10, 12), 10.0, "outside_video"),
        (("a", 2), None, "not_a_number"),
        ((None, 2), None, "not_a_number"),
    ],
)
def test_check_span_reasons(span, duration, reason):
    assert check_span(*span, duration=duration) == reason


def test_clean_spans_clamps_merges_and_reports():
    spans, problems = clean_spans([(5, 8), (1, 3), (2, 4), (7, 30), (3, 2), (9, 9), "x"], duration=20)
    assert spans == [(1.0, 4.0), (5.0, 20.0)]
    assert sorted(problems) == ["empty", "not_a_pair", "reversed"]


def test_clean_spans_keeps_points_for_ground_truth():
    assert clean_spans([(4, 4)], 10, keep_points=True) == ([(4.0, 4.0)], [])


def test_set_measures_on_hand_computed_case():
    pred = [(0, 4), (6, 10)]  # union length 8
    gt = [(2, 7), (3, 5)]  # union (2, 7), length 5
    assert intersection_length(pred, gt) == pytest.approx(3.0)  # (2,4) + (6,7)
    assert iou(pred, gt) == pytest.approx(3 / 10)  # union of both: (0, 10)
    assert iop(pred, gt) == pytest.approx(3 / 8)
    assert iog(pred, gt) == pytest.approx(3 / 5)


def test_empty_and_point_sets_give_zero():
    assert iou([], [(1, 2)]) == iou([(1, 2)], []) == 0.0
    assert iou([(3, 3)], [(3, 3)]) == 0.0
    assert iop([(1, 2)], [(5, 6)]) == 0.0
    assert total_length([]) == 0.0


def test_widen_spans_stays_inside_video():
    assert widen_spans([(0.0, 0.2)], 2.0, 10.0) == [(0.0, 2.0)]
    assert widen_spans([(9.9, 10.0)], 2.0, 10.0) == [(8.0, 10.0)]
    assert widen_spans([(4.0, 4.0)], 2.0, 10.0) == [(3.0, 5.0)]
    assert widen_spans([(1.0, 5.0)], 2.0, 10.0) == [(1.0, 5.0)]
    assert widen_spans([(1.0, 1.5)], 5.0, 3.0) == [(0.0, 3.0)]


spans_st = st.lists(
    st.tuples(st.floats(0, 100, allow_nan=False), st.floats(0, 100, allow_nan=False)).map(lambda p: tuple(sorted(p))),
    max_size=6,
)


@settings(max_examples=400, deadline=None)
@given(spans_st, spans_st)
def test_measures_are_bounded_and_symmetric(a, b):
    v = iou(a, b)
    assert 0.0 <= v <= 1.0 + 1e-12
    assert v == pytest.approx(iou(b, a))
    assert 0.0 <= iop(a, b) <= 1.0 + 1e-12 and 0.0 <= iog(a, b) <= 1.0 + 1e-12
    assert iou(a, b) <= min(iop(a, b), iog(a, b)) + 1e-12
    assert intersection_length(a, b) <= min(total_length(a), total_length(b)) + 1e-9


@settings(max_examples=300, deadline=None)
@given(spans_st)
def test_merge_is_idempotent_and_disjoint(a):
    m = merge_spans(a)
    assert merge_spans(m) == m
    assert all(m[i][1] < m[i + 1][0] for i in range(len(m) - 1))
    if total_length(a) > 0:
        assert iou(a, a) == pytest.approx(1.0)
    assert math.isclose(total_length(m), total_length(a))
