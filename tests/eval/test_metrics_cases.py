"""Hand-computed cases, including the official scripts' edge cases."""

import math

import pytest

from zoomzero_plugin.eval.metrics import BENCHMARKS, score_predictions, score_questions, truths_from_rows
from zoomzero_plugin.eval.predictions import index_predictions
from zoomzero_plugin.eval.reductions import first_window, merged, union
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.prompts import grounding_row


def truth(qid="q", spans=((10, 20),), duration=100, answer="A", **extra) -> GroundTruth:
    return GroundTruth.parse(
        {
            "qid": qid,
            "answer": answer,
            "options": ["a", "b", "c", "d"],
            "spans": [list(s) for s in spans],
            "duration": duration,
            **extra,
        }
    )


def truths(*ts: GroundTruth) -> dict[str, GroundTruth]:
    return {t.qid: t for t in ts}


def pred(qid="q", spans=(), answer="A"):
    return {"qid": qid, "answer": answer, "spans": [list(s) for s in spans]}


# --- reductions on one question -------------------------------------------------------------------


def test_first_window_uses_only_the_first_span_and_the_best_window():
    t = truth(spans=((0, 10), (20, 30)))
    # first span overlaps the second window: IoU 5/15 there, 0 with the first.
    assert first_window([[25, 35], [0, 10]], t) == pytest.approx((5 / 15, 5 / 10, 5 / 20))
    # union of both predicted spans: ∩ = 10 + 5, ∪ = 10 + 15 → 15/25; IoP 15/20; IoG 15/20.
    assert union([[25, 35], [0, 10]], t) == pytest.approx((15 / 25, 15 / 20, 15 / 20))


def test_point_prediction_nextgqa_rule():
    t = truth(spans=((10, 20),))
    assert first_window([[15, 15]], t) == (0.0, 1.0, 0.0)  # inside: IoU 0, IoP 1
    assert first_window([[20, 20]], t) == (0.0, 1.0, 0.0)  # the window's edge counts as inside
    assert first_window([[25, 25]], t) == (0.0, 0.0, 0.0)
    assert union([[15, 15]], t) == (0.0, 0.0, 0.0)  # the union rule drops zero-length spans


def test_point_ground_truth_scores_zero_unless_the_prediction_is_the_same_point():
    t = truth(spans=((5, 5),))
    assert first_window([[0, 10]], t) == (0.0, 0.0, 0.0)
    assert first_window([[5, 5]], t) == (0.0, 1.0, 0.0)


def test_reversed_or_garbage_first_span_scores_zero_even_when_later_spans_are_right():
    t = truth(spans=((10, 20),))
    for first in ([20, 10], [float("nan"), 5], ["x", 3], [1, 2, 3], None, 7):
        assert first_window([first, [10, 20]], t) == (0.0, 0.0, 0.0), first
        assert union([first, [10, 20]], t) == (1.0, 1.0, 1.0)
    assert first_window([], t) == (0.0, 0.0, 0.0)


def test_official_rules_do_not_clamp_to_the_video_but_union_does():
    t = truth(spans=((90, 100),), duration=100)
    assert first_window([[90, 110]], t) == pytest.approx((0.5, 0.5, 1.0))
    assert merged([[90, 110]], t) == pytest.approx((0.5, 0.5, 1.0))
    assert union([[90, 110]], t) == (1.0, 1.0, 1.0)


def test_merged_rule_keeps_valid_items_and_measures_unions():
    t = truth(spans=((0, 10), (10, 12), (20, 30)))  # GroundTruth merges the touching pair
    assert t.spans == ((0.0, 12.0), (20.0, 30.0))
    # predicted union [5, 25] (two overlapping items), a reversed item dropped: ∩ = 7 + 5, ∪ = 30.
    assert merged([[5, 15], [12, 25], [40, 35]], t) == pytest.approx((12 / 30, 12 / 20, 12 / 22))


def test_gt_windows_extra_gives_the_raw_windows_to_the_per_window_rule():
    t = truth(spans=((0, 10), (10, 20)), gt_windows=[[0, 10], [10, 20]])
    assert t.spans == ((0.0, 20.0),)
    assert first_window([[0, 10]], t).iou == 1.0
    assert first_window([[0, 10]], truth(spans=((0, 10), (10, 20)))).iou == 0.5
    with pytest.raises(ValueError, match="gt_windows"):
        first_window([[0, 10]], truth(gt_windows=[[0, "x"]]))


# --- NExT-GQA -------------------------------------------------------------------------------------


def test_nextgqa_denominators_missing_and_empty_predictions():
    ts = truths(truth("a", ((0, 10),)), truth("b", ((0, 10),)), truth("c", ((0, 10),)), truth("d", ((0, 10),)))
    preds = [
        pred("a", [(0, 10)]),  # IoU 1, IoP 1, correct
        pred("b", [(5, 10)], answer="B"),  # IoU .5, IoP 1, wrong
        pred("c", []),  # a prediction with no span: counted, all zero
    ]  # d: missing — skipped by grounding, wrong for Acc@QA
    m = score_predictions("nextgqa", preds, ts)
    assert m["Acc@QA"] == pytest.approx(100 * 2 / 4)  # a and c answered A correctly; d missing
    assert m["scored_grounding"] == 3
    assert m["mIoU"] == pytest.approx(100 * 1.5 / 3)
    assert m["mIoP"] == pytest.approx(100 * 2 / 3)
    assert m["IoU@0.5"] == pytest.approx(100 * 2 / 3)  # IoU exactly 0.5 counts (>=)
    assert m["IoU@0.3"] == pytest.approx(100 * 2 / 3)
    assert m["IoP@0.5"] == pytest.approx(100 * 2 / 3)
    assert m["Acc@GQA"] == pytest.approx(100 * 1 / 3)  # only a: correct and IoP >= .5
    assert (m["questions"], m["predicted"], m["missing"]) == (4, 3, 1)


def test_nextgqa_several_ground_truth_windows_keep_the_max():
    ts = truths(truth("a", ((0, 4), (10, 20))))
    m = score_predictions("nextgqa", [pred("a", [(12, 22)])], ts)
    assert m["mIoU"] == pytest.approx(100 * 8 / 12)
    assert m["mIoP"] == pytest.approx(100 * 8 / 10)
    assert m["mIoG"] == pytest.approx(100 * 8 / 14)  # IoG is on the ground-truth union


# --- ReXTime --------------------------------------------------------------------------------------


def test_rextime_counts_every_question_and_missing_scores_zero():
    ts = truths(truth("a", ((0, 10),)), truth("b", ((0, 10),)), truth("c", ((0, 10),), answer="C"))
    preds = [pred("a", [(0, 10), (50, 60)]), pred("b", [(0, 5)], answer="A"), pred("c", [(0, 7)], answer=None)]
    m = score_predictions("rextime", preds[:2], ts)  # c missing
    assert m["scored_grounding"] == 3
    assert m["mIoU"] == pytest.approx(100 * 1.5 / 3)
    assert (m["R1@0.3"], m["R1@0.5"], m["R1@0.7"]) == pytest.approx((200 / 3, 200 / 3, 100 / 3))
    assert m["Acc"] == pytest.approx(200 / 3)
    assert m["Acc@IoU>=0.5"] == pytest.approx(200 / 3)
    assert m["Acc@IoU>=0.7"] == pytest.approx(100 / 3)
    m = score_predictions("rextime", preds, ts)  # c with no answer: wrong
    assert m["Acc"] == pytest.approx(200 / 3) and m["R1@0.7"] == pytest.approx(200 / 3)
    assert m["no_answer"] == 1


# --- CG-Bench -------------------------------------------------------------------------------------


def test_cgbench_rec_and_acc_at_iou_average_five_thresholds():
    ts = truths(*(truth(q, ((0, 100),)) for q in "abcd"))
    preds = [
        pred("a", [(0, 15)]),  # IoU .15
        pred("b", [(0, 20), (25, 50)]),  # union 45 → IoU .45
        pred("c", [(0, 60)], answer="B"),  # IoU .6, wrong
        pred("d", [(0, 100)], answer=None),  # IoU 1, no letter
    ]
    m = score_predictions("cgbench", preds, ts)
    assert m["mIoU"] == pytest.approx(100 * (0.15 + 0.45 + 0.6 + 1) / 4)
    # rec: t=.1: 4/4, .2: 3/4, .3: 3/4, .4: 3/4, .5: 2/4
    assert m["rec.@IoU"] == pytest.approx(100 * (4 + 3 + 3 + 3 + 2) / 20)
    # acc.@IoU over a, b, c (d has no letter): correct a, b → t=.1: 2/3, .2-.4: 1/3, .5: 0
    assert m["acc.@IoU"] == pytest.approx(100 * (2 + 1 + 1 + 1 + 0) / 15)
    assert m["Acc"] == pytest.approx(100 * 2 / 3)  # long-acc over the three with a letter
    assert (m["scored_accuracy"], m["scored_grounding"], m["scored_both"]) == (3, 4, 3)


def test_cgbench_thresholds_count_an_iou_exactly_on_them():
    """IoU = L/100 for a span (0, L) of a (0, 100) clue: exactly 0.1 … 0.5 (run/utils.py counts iou >= t)."""
    ts = truths(*(truth(q, ((0, 100),)) for q in "abcde"))
    preds = [pred(q, [(0, 10 * k)]) for k, q in enumerate("abcde", 1)]  # all answer A: correct
    m = score_predictions("cgbench", preds, ts)
    # t = .1: 5 of 5, .2: 4, .3: 3, .4: 2, .5: 1 → (5 + 4 + 3 + 2 + 1) / 25 for both (every answer right)
    assert m["rec.@IoU"] == pytest.approx(100 * 15 / 25) and m["acc.@IoU"] == pytest.approx(100 * 15 / 25)
    assert [m[f"acc@IoU@{t}"] for t in (0.1, 0.2, 0.3, 0.4, 0.5)] == pytest.approx([100, 80, 60, 40, 20])
    assert m["mIoU"] == pytest.approx(30.0)


def test_nextgqa_iop_and_iou_thresholds_are_different_measures():
    ts = truths(*(truth(q, ((10, 20),), answer=a) for q, a in (("a", "A"), ("b", "B"), ("c", "A"))))
    preds = [
        pred("a", [(5, 15)]),  # ∩ 5: IoU 5/15, IoP 5/10 = 0.5 exactly; correct
        pred("b", [(10, 13)]),  # ∩ 3: IoU 3/10 = 0.3 exactly, IoP 1; wrong (answers A, truth B)
        pred("c", [(12, 30)]),  # ∩ 8: IoU 8/20 = 0.4, IoP 8/18; correct
    ]
    m = score_predictions("nextgqa", preds, ts)
    assert (m["IoP@0.5"], m["IoP@0.3"]) == pytest.approx((200 / 3, 100.0))  # a (0.5), b (1); c (0.44) only at .3
    assert (m["IoU@0.5"], m["IoU@0.3"]) == pytest.approx((0.0, 100.0))  # 0.33, 0.3 and 0.4 are all >= 0.3
    assert m["mIoP"] == pytest.approx(100 * (0.5 + 1 + 8 / 18) / 3)
    assert m["mIoU"] == pytest.approx(100 * (5 / 15 + 0.3 + 0.4) / 3)
    assert m["Acc@GQA"] == pytest.approx(100 / 3)  # correct and IoP >= 0.5: a only (c's IoP is 0.44)
    assert m["Acc@QA"] == pytest.approx(200 / 3)


def test_cgbench_empty_prediction_counts_as_iou_zero():
    ts = truths(truth("a", ((0, 10),)), truth("b", ((0, 10),)))
    m = score_predictions("cgbench", [pred("a", []), pred("b", [(0, 10)])], ts)
    assert m["mIoU"] == 50.0 and m["scored_grounding"] == 2


# --- MCQ benchmarks -------------------------------------------------------------------------------


def _mcq_truths():
    return truths(
        truth("s1", (), duration=60, duration_category="short", question_type=["TG", "ER"], task_type="count"),
        truth("s2", (), duration=60, duration_category="short", question_type=["ER"], task_type="count"),
        truth("m1", (), duration=600, duration_category="medium", question_type=["KIR"], task_type="order"),
        truth("l1", (), duration=3000, duration_category="long", question_type=["TG"], task_type="order"),
    )


def test_mcq_denominators_follow_each_script():
    ts = _mcq_truths()
    preds = [pred("s1"), pred("s2", answer="B"), pred("m1", answer=None)]  # l1 missing
    vm = score_predictions("videomme", preds, ts)  # over answered: s1, s2
    assert vm["Acc"] == 50.0 and vm["Acc[duration_category=short]"] == 50.0
    assert "Acc[duration_category=long]" not in vm
    lv = score_predictions("lvbench", preds, ts)  # over predicted: s1, s2, m1
    assert lv["Acc"] == pytest.approx(100 / 3)
    assert lv["Acc[question_type=TG]"] == 100.0 and lv["n[question_type=ER]"] == 2  # list values count in each
    ml = score_predictions("mlvu", preds, ts)  # over all four
    assert ml["Acc"] == 25.0
    assert ml["M-Avg"] == pytest.approx((50.0 + 0.0) / 2)  # macro over task types count / order


def test_mcq_reductions_are_irrelevant():
    ts = _mcq_truths()
    preds = [pred("s1", [(0, 5)]), pred("l1", [(9, 1)])]
    for name in ("videomme", "mlvu", "lvbench"):
        assert score_predictions(name, preds, ts, "official") == score_predictions(name, preds, ts, "union")


# --- rows, records, errors ------------------------------------------------------------------------


def test_rows_benchmark_on_unions():
    ts = truths(truth("a", ((0, 10), (20, 30))), truth("b", ((0, 10),)))
    preds = [pred("a", [(0, 10), (20, 25)]), pred("b", [(5, 15)], answer="C")]
    m = score_predictions("rows", preds, ts, "union")
    assert m["mIoU"] == pytest.approx(100 * (15 / 20 + 5 / 15) / 2)
    assert m["mIoP"] == pytest.approx(100 * (1 + 0.5) / 2)
    assert m["mIoG"] == pytest.approx(100 * (15 / 20 + 0.5) / 2)
    assert m["Acc"] == 50.0 and m["IoU@0.7"] == 50.0
    assert score_predictions("rows", preds, ts, "official") == m  # the project's own rule is the union


def test_duplicates_last_wins_and_invalid_spans_are_counted():
    ts = truths(truth("a", ((0, 10),)))
    preds = [pred("a", [(0, 10)]), pred("a", [(20, 10), (0, 5), (float("nan"), 1), (200, 300), (3, 3)], answer="b")]
    m = score_predictions("rows", preds, ts)
    assert m["duplicates"] == 1 and m["Acc"] == 0.0  # the second record ("B") won
    assert m["mIoU"] == 50.0
    assert m["invalid_spans"] == 4  # reversed, NaN, past the end, zero-length


def test_answers_are_kept_as_written_and_read_when_scored():
    records = [
        {"qid": 1, "answer": "(b)"},
        {"qid": "2", "answer": " C. red"},
        {"qid": "3", "answer": "maybe"},
        {"qid": "4", "answer": 3},
        {"qid": "5"},
        {"qid": "6", "answer": "E"},
    ]
    by_qid, _ = index_predictions(records)
    assert [by_qid[q].answer for q in "123456"] == ["(b)", " C. red", "maybe", None, None, "E"]
    scores, _ = score_questions("rows", records, truths(*(truth(q, answer="B") for q in "123456")))
    # four options A-D: "E" names none of them
    assert [s.answer for s in scores] == ["B", "C", None, None, None, None]
    assert [s.correct for s in scores] == [True, False, False, False, False, False]


def test_errors_name_the_problem():
    ts = truths(truth("a"))
    with pytest.raises(ValueError, match="not in the data.*'zz'"):
        score_predictions("rows", [pred("zz")], ts)
    with pytest.raises(ValueError, match="unknown benchmark 'nope'"):
        score_predictions("nope", [], ts)
    with pytest.raises(ValueError, match="unknown reduction"):
        score_predictions("rows", [], ts, "first")
    with pytest.raises(ValueError, match="no 'qid'"):
        score_predictions("rows", [{"answer": "A"}], ts)
    row = grounding_row(qid="a", question="?", options=["x", "y"], answer="A", duration=5, video="v.mp4")
    with pytest.raises(ValueError, match=r"the data: 1 bad row\(s\): row 2: question id 'a' repeats row 1"):
        truths_from_rows([row, row])


def test_empty_populations_give_zero_not_nan():
    for name in BENCHMARKS:
        m = score_predictions(name, [], truths(truth("a")))
        assert all(not (isinstance(v, float) and math.isnan(v)) for v in m.values()), name
        assert m["missing"] == 1
