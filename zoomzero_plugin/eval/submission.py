"""Submission files for benchmarks whose test labels only their server has (``zoomzero score --export``).

ReXTime (ReXTime/ReXTime README "Evaluation"; ``evaluation/rextime_eval.py``): JSONL, one line per test question,
``{"qid": "anet_test7", "pred_relevant_windows": [[s, e], ...], "ans": "B"}``. The server requires exactly the
test set's qids and reads ``pred_relevant_windows[0][:2]``, so every line carries at least one window: the
prediction's spans that are pairs of finite numbers, as written and in order (the first is the one scored),
or ``[[0.0, 0.0]]`` (IoU 0) when it has none. ``ans`` is the predicted letter (the answer read by
:data:`~zoomzero_plugin.answers.REPLY` among the question's options), or ``""`` when there is none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..answers import REPLY, letter_of
from ..ground_truth import GroundTruth
from .predictions import Prediction
from .reductions import as_pair


def rextime_line(truth: GroundTruth, pred: Prediction) -> dict[str, Any]:
    windows = [list(pair) for item in pred.spans if (pair := as_pair(item)) is not None]
    letter = letter_of(pred.answer, truth.letters, REPLY)
    return {"qid": truth.qid, "pred_relevant_windows": windows or [[0.0, 0.0]], "ans": letter or ""}


EXPORTS: dict[str, Callable[[GroundTruth, Prediction], dict[str, Any]]] = {"rextime": rextime_line}


def submission(
    benchmark: str, predictions: dict[str, Prediction], truths: Mapping[str, GroundTruth]
) -> list[dict[str, Any]]:
    """One submission line per question of ``truths`` (the test set's, in its order).

    Raises ValueError when a prediction names a qid outside ``qids`` or a question has no prediction: the
    server rejects a file whose qids differ from the test set's.
    """
    line = EXPORTS[benchmark]
    qids, known = list(truths), set(truths)
    foreign = [q for q in predictions if q not in known]
    if foreign:
        raise ValueError(f"{len(foreign)} prediction(s) for questions not in the data, e.g. {foreign[:3]}")
    missing = [q for q in qids if q not in predictions]
    if missing:
        raise ValueError(
            f"{len(missing)} of {len(qids)} questions have no prediction, e.g. {missing[:3]}; "
            f"the {benchmark} server needs every one (rerun `zoomzero eval` on them)"
        )
    return [line(truths[q], predictions[q]) for q in qids]
