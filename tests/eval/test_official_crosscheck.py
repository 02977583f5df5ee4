"""The package's metrics equal independent re-statements of the official scripts on real annotation rows."""

import random

import pytest

from zoomzero_plugin.eval.metrics import score_predictions, truths_from_rows

from .conftest import nextgqa_rows
from .reference import cgbench_intervals_iou, cgbench_stats, nextgqa_eval_ground, rextime_eval


def _spans_for(truth, rng: random.Random, case: int, allow_reversed: bool = True) -> list[list[float]]:
    """A mix of the predictions systems make: exact, shifted, elsewhere, points, past the end, several."""
    d = truth.duration
    s, e = truth.spans[rng.randrange(len(truth.spans))]
    shift = rng.uniform(-0.5, 0.5) * max(e - s, 1.0)
    elsewhere = sorted(round(rng.uniform(0, d), 1) for _ in range(2))
    cases = [
        [[s, e]],
        [[round(s + shift, 1), round(e + shift, 1)]],
        [elsewhere],
        [[round((s + e) / 2, 1)] * 2],  # a point inside the evidence
        [[round(d * 0.99, 1)] * 2],  # a point near the end
        [[s, d + 5.0]],  # past the video's end (official rules do not clamp)
        [elsewhere, [s, e]],  # the first span is the wrong one
        [[s, e], elsewhere, [0, 1]],
        [[round(s - 1, 1), round((s + e) / 2, 1)], [round((s + e) / 2, 1), e + 1]],  # touching pair
    ]
    if allow_reversed:
        cases.append([[e, s], [s, e]])  # a reversed first span
    return cases[case % len(cases)]


def _answer(truth, rng: random.Random) -> str | None:
    return rng.choice([truth.answer, truth.answer, "A", "B", None])


def _predictions(truths, seed: int, missing: bool = True, empty: bool = False, allow_reversed: bool = True):
    """Records cycling through every kind of span list; every 6th question missing, every 5th empty."""
    rng = random.Random(seed)
    preds = []
    for i, (qid, truth) in enumerate(truths.items()):
        if missing and i % 6 == 5:
            continue
        spans = [] if empty and i % 5 == 4 else _spans_for(truth, rng, i + seed, allow_reversed)
        preds.append({"qid": qid, "answer": _answer(truth, rng), "spans": spans})
    return preds


def test_nextgqa_matches_eval_ground_on_real_rows(nextgqa_sample):
    truths, gsub = nextgqa_sample
    preds = _predictions(truths, seed=0)  # missing ones: eval_ground skips them; Acc@QA counts them wrong
    assert 0 < len(preds) < len(truths)
    official = nextgqa_eval_ground(
        gsub,
        {p["qid"]: p["spans"][0] for p in preds},
        {p["qid"]: {"answer": truths[p["qid"]].answer, "prediction": p["answer"]} for p in preds},
    )
    ours = score_predictions("nextgqa", preds, truths, "official")
    for key, value in official.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key
    n_correct = sum(p["answer"] == truths[p["qid"]].answer for p in preds)
    assert ours["Acc@QA"] == pytest.approx(100 * n_correct / len(truths))
    assert ours["scored_grounding"] == len(preds) and ours["missing"] == len(truths) - len(preds)


def test_nextgqa_without_raw_windows_differs_only_on_touching_windows(nextgqa_sample):
    """GroundTruth merges touching windows; without ``gt_windows`` the per-window max sees the merge."""
    truths, _ = nextgqa_sample
    merged_truths = truths_from_rows(nextgqa_rows(keep_windows=False)[0])
    touching = "3249402410_5"  # windows [13.8, 13.9] and [13.9, 19.0]
    assert len(truths[touching].spans) == 1 and len(truths[touching].extra["gt_windows"]) == 2
    pred = [{"qid": touching, "answer": None, "spans": [[13.8, 19.0]]}]
    assert score_predictions("nextgqa", pred, {touching: truths[touching]})["mIoU"] == pytest.approx(100 * 5.1 / 5.2)
    assert score_predictions("nextgqa", pred, {touching: merged_truths[touching]})["mIoU"] == pytest.approx(100.0)


def test_rextime_matches_rextime_eval_on_real_rows(rextime_sample):
    truths, gt = rextime_sample
    preds = _predictions(truths, seed=1, missing=False)  # the script requires every question
    submission = [{"qid": p["qid"], "pred_relevant_windows": p["spans"], "ans": p["answer"]} for p in preds]
    official = rextime_eval(submission, gt)
    ours = score_predictions("rextime", preds, truths, "official")
    for key, value in official.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key


def test_cgbench_matches_stat_with_key_on_real_rows(cgbench_sample):
    truths, annos = cgbench_sample
    preds = _predictions(truths, seed=2, empty=True, allow_reversed=False)
    by_qid = {p["qid"]: p for p in preds}
    miou = {
        a["qid"]: cgbench_intervals_iou(by_qid[str(a["qid"])]["spans"], a["clue_intervals"])
        for a in annos
        if str(a["qid"]) in by_qid
    }
    long_acc = {
        a["qid"]: int(by_qid[str(a["qid"])]["answer"] == a["right_answer"])
        for a in annos
        if str(a["qid"]) in by_qid and by_qid[str(a["qid"])]["answer"] is not None
    }
    official = cgbench_stats(annos, miou, long_acc)
    ours = score_predictions("cgbench", preds, truths, "official")
    for key, value in official.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key
