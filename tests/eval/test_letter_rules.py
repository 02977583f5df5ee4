"""Letters read the way each benchmark reads them: the official rule picks the letter, the official population
decides what a reply without one costs. Counts worked out by hand from the rules quoted in docs/metrics.md."""

import json

import pytest

from zoomzero_plugin.answers import REPLY
from zoomzero_plugin.eval.metrics import score_predictions
from zoomzero_plugin.eval.predictions import index_predictions
from zoomzero_plugin.eval.runner import evaluate
from zoomzero_plugin.eval.submission import submission
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.gvqa.prompts import grounding_row
from zoomzero_plugin.inference.backend import Generation, Output
from zoomzero_plugin.inference.modes import ModeConfig

# four questions, options A-D, truth A; the replies read as A, none, C, and A ("Answer" holds the capital A) by
# Video-MME's and LongVideoBench's first-capital rules
REPLIES = ["A", "b", "The answer is C", "Answer: D"]


def truths(answer="A", n=len(REPLIES)) -> dict[str, GroundTruth]:
    return {
        f"q{i}": GroundTruth.parse({"qid": f"q{i}", "answer": answer, "options": ["w", "x", "y", "z"], "duration": 60})
        for i in range(n)
    }


def records(replies) -> list[dict]:
    return [{"qid": f"q{i}", "answer": r, "spans": []} for i, r in enumerate(replies)]


def test_video_mme_drops_a_reply_without_a_letter_from_the_denominator():
    m = score_predictions("videomme", records(REPLIES), truths())
    # answered: A, C, A (3); correct: 2
    assert (m["scored_accuracy"], m["no_answer"]) == (3, 1) and m["Acc"] == pytest.approx(200 / 3)


def test_longvideobench_counts_it_wrong():
    m = score_predictions("longvideobench", records(REPLIES), truths())
    assert (m["scored_accuracy"], m["no_answer"]) == (4, 1) and m["Acc"] == 50.0  # A, -, C, A over all four


def test_the_package_rule_reads_phrases_and_lower_case():
    m = score_predictions("rows", records(REPLIES), truths())
    assert m["no_answer"] == 0 and m["Acc"] == 25.0  # A, B ("b"), C, D: one right
    m = score_predictions("rows", records(["a.", "I think it's A", "answer: (a)", "E"]), truths())
    assert m["no_answer"] == 1 and m["Acc"] == 75.0  # E is not an option


def test_mlvu_reads_ordinary_replies_as_lmms_eval_does():
    # "A", "A.", "(A)", "A. w", "A) w" all read A (right); "b" and "(E)" name no letter A-D: counted wrong, over all six
    m = score_predictions("mlvu", records(["A", "A.", "(A)", "A. w", "A) w", "b"]), truths(n=6))
    assert (m["Acc"], m["no_answer"], m["scored_accuracy"]) == (pytest.approx(500 / 6), 1, 6)


def test_mlvu_m_avg_is_the_mean_of_its_task_types():
    # count: A (right), "B. x" (wrong) -> 50 %; order: "(A)" (right) -> 100 %; M-Avg 75, the micro Acc 2 of 3
    kinds = ["count", "count", "order"]
    given = {
        qid: GroundTruth.parse({**json.loads(t.to_json()), "task_type": kind})
        for (qid, t), kind in zip(truths(n=3).items(), kinds)
    }
    m = score_predictions("mlvu", records(["A", "B. x", "(A)"]), given)
    assert (m["M-Avg"], m["Acc"]) == (75.0, pytest.approx(200 / 3))


def test_lvbench_polishes_and_counts_every_predicted_question():
    m = score_predictions("lvbench", records(["(A) w", "A. w", "The answer is A", "I think (A) fits"]), truths())
    assert m["Acc"] == 75.0 and m["scored_accuracy"] == 4 and m["no_answer"] == 1  # "The" -> T: no letter


def test_cgbench_reads_json_then_letters_and_drops_replies_naming_several():
    replies = ['```json\n{"result": "A"}\n```', "I pick A", "A or C", "E"]
    m = score_predictions("cgbench", records(replies), {k: t for k, t in truths().items()})
    # A, A, several (dropped), E (answered: the script reads A-H; wrong)
    assert (m["scored_accuracy"], m["no_answer"]) == (3, 1) and m["Acc"] == pytest.approx(200 / 3)


def test_the_rextime_submission_reads_the_letter_among_the_options():
    preds, _ = index_predictions(records(["The answer is B", "E", None, "(c)"]))
    lines = submission("rextime", preds, truths())
    assert [line["ans"] for line in lines] == ["B", "", "", "C"]


class Replies:
    """A backend that says the scripted reply to every request (no model: the reading is under test)."""

    name, factor = "replies", 28

    def __init__(self, replies):
        self.replies = replies

    def generate(self, requests, params):
        return [
            Generation([Output(next(v for k, v in self.replies.items() if f"Which {k}?" in r.prompt), [])])
            for r in requests
        ]


@pytest.mark.parametrize("benchmark, letters", [("videomme", ["A", None, "C", "A"]), ("rows", ["A", "B", "C", "D"])])
def test_zoomzero_eval_reads_model_replies_by_the_benchmarks_rule(tmp_path, benchmark, letters):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"not decoded: the backend is scripted")
    rows = [
        grounding_row(
            qid=f"q{i}",
            question=f"Which q{i}?",
            options=["w", "x", "y", "z"],
            answer="A",
            duration=60,
            video=str(video),
        )
        for i in range(len(REPLIES))
    ]
    backend = Replies({f"q{i}": r for i, r in enumerate(REPLIES)})
    metrics = evaluate(
        backend, rows, tmp_path / "out", benchmark=benchmark, mode="one-stage", cfg=ModeConfig(), progress=False
    )
    written = [json.loads(line)["answer"] for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert written == letters
    assert metrics["no_answer"] == letters.count(None)
    said = json.loads((tmp_path / "out" / "metrics.json").read_text())["letters"]
    assert said == {"videomme": "Video-MME eval_your_results.py", "rows": REPLY.name}[benchmark]
