"""`zoomzero score --benchmark mlvu` reads replies as lmms-eval's own MLVU task does, checked against lmms-eval's real
scorer (``lmms_eval.tasks.mlvu.utils``: ``mlvu_process_results``, ``mlvu_aggregate_results_dev``), and the other
benchmarks' official readers against lmms-eval's readers of the same benchmarks on the ordinary reply shapes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.answers import LONGVIDEOBENCH, LVBENCH, MLVU, VIDEOMME, letter_of
from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.rows import make_row, write_rows

LETTERS = "ABCD"
# the shapes ordinary replies take (the list), for every letter
ORDINARY = [shape.format(L) for L in LETTERS for shape in ("{}", "{}.", "({})", "{}. the chef", "{}) the chef")]
TASK_TYPES = ("anomaly_reco", "count", "ego", "needle", "order", "plotQA", "topic_reasoning")  # mlvu_dev's seven


@pytest.fixture(scope="module")
def mlvu():
    from lmms_eval.tasks.mlvu import utils

    return utils


def lmms_letter(utils, reply: str) -> str | None:
    """The letter lmms-eval's MLVU task records for ``reply`` ("" when it reads none)."""
    doc = {"question": "q", "task_type": "count", "answer": "A"}
    return utils.mlvu_process_results(doc, [reply])["mlvu_percetion_score"]["pred_answer"] or None


def test_ordinary_replies_read_the_same_letter(mlvu):
    assert [letter_of(r, LETTERS, MLVU) for r in ORDINARY] == [lmms_letter(mlvu, r) for r in ORDINARY]
    assert [letter_of(r, LETTERS, MLVU) for r in ORDINARY] == [r.strip("(")[0] for r in ORDINARY]  # by hand


PIECES = st.sampled_from(
    [*"ABCDEabcd ().:,!?;'\"\n", "The answer is ", "answer is", "Best option: (", "I choose", "选", "答えは", "é", "İ"]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(PIECES, max_size=16).map("".join))
def test_any_reply_without_an_answer_block_reads_as_lmms_eval_reads_it(mlvu, reply):
    assert letter_of(reply, LETTERS, MLVU) == lmms_letter(mlvu, reply)


def test_zoomzero_score_gives_lmms_evals_mlvu_dev_score(mlvu, tmp_path):
    """Two questions of each of the seven task types, answered with ordinary replies; the k-th task type's second
    reply is wrong when k is even. By hand: four types at 50 %, three at 100 % -> M-Avg (2 + 3) / 7 * 100."""
    rows, replies, docs = [], [], []
    for k, kind in enumerate(TASK_TYPES):
        for j in range(2):
            truth = LETTERS[(k + j) % 4]
            shape = ["{}", "{}.", "({})", "{}. the chef", "{}) the chef"][(2 * k + j) % 5]
            said = LETTERS[(k + j + 1) % 4] if j == 1 and k % 2 == 0 else truth
            qid = f"{kind}_{j}"
            rows.append(
                make_row(
                    qid=qid,
                    question="Which?",
                    options=["w", "x", "y", "z"],
                    answer=truth,
                    duration=60.0,
                    video="v.mp4",
                    prompt="<video>Which?",
                    task_type=kind,
                )
            )
            replies.append({"qid": qid, "answer": shape.format(said), "spans": []})
            docs.append({"question": qid, "task_type": kind, "answer": truth})
    data, predictions, out = tmp_path / "rows.jsonl", tmp_path / "predictions.jsonl", tmp_path / "report"
    write_rows(data, rows)
    predictions.write_text("".join(json.dumps(r) + "\n" for r in replies))
    assert zoomzero(["score", "--benchmark", "mlvu", str(predictions), "--data", str(data), "--out", str(out)]) == 0
    ours = json.loads((out / "metrics.json").read_text())["metrics"]
    theirs = mlvu.mlvu_aggregate_results_dev(
        [mlvu.mlvu_process_results(doc, [r["answer"]])["mlvu_percetion_score"] for doc, r in zip(docs, replies)]
    )
    assert ours["M-Avg"] == pytest.approx(theirs) == pytest.approx(100 * 5 / 7)
    assert ours["Acc"] == pytest.approx(100 * 10 / 14) and ours["no_answer"] == 0


def test_the_other_benchmarks_official_readers_agree_with_lmms_eval_on_ordinary_replies():
    """Video-MME and LVBench (lmms-eval reads them with the same extract_mcq_answer) and LongVideoBench (its own
    parse_multi_choice_response): the official rules this package keeps read every ordinary shape alike."""
    from lmms_eval.tasks.longvideobench.utils import parse_multi_choice_response
    from lmms_eval.tasks.lvbench.utils import extract_characters_regex as lvbench
    from lmms_eval.tasks.videomme.utils import extract_characters_regex as videomme

    for rule, theirs in (
        (VIDEOMME, videomme),
        (LVBENCH, lvbench),
        (LONGVIDEOBENCH, lambda r: parse_multi_choice_response(r, list(LETTERS), {})),
    ):
        assert [letter_of(r, LETTERS, rule) for r in ORDINARY] == [theirs(r) for r in ORDINARY], rule.name
