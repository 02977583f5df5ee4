"""What the task YAMLs of ``zoomzero lmms-eval tasks`` name: the documents are dataset rows, the metrics official.

lmms-eval calls ``doc_to_visual`` / ``doc_to_text`` / ``doc_to_target`` per row, then ``<benchmark>_results`` per
reply and :func:`aggregate` once per metric. A reply's letter is read as ``zoomzero score`` reads it: by the
benchmark's letter rule among the row's options (the last ``<answer>`` block, else the whole reply; CG-Bench's
official reader, this package's :data:`~zoomzero_plugin.answers.REPLY` for NExT-GQA and ReXTime); the spans as the
model cites them, in order and unchecked, from the last ``<glue>`` block (each benchmark's official rule then
decides what counts: NExT-GQA and ReXTime the first span, CG-Bench their union).
So the metrics are exactly what ``zoomzero score`` computes for predictions with those answers and spans
(:func:`~zoomzero_plugin.eval.metrics.score_predictions`, official reduction), whichever model wrote the replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...answers import REPLY, LetterRule, letter_of
from ...eval.metrics import get_benchmark, score_predictions, truths_from_rows
from ...question import VIDEO_PLACEHOLDER
from ...rows import ANSWER_KEY, PROMPT_KEY, VIDEO_KEY, row_truth
from ...tags import last_bounds, read_span_list


def metric_names(benchmark: str) -> list[str]:
    """The metrics a task of ``benchmark`` reports: the columns of the benchmark's paper table."""
    return [key for _, key in get_benchmark(benchmark).table()]


def doc_to_visual(doc: Mapping[str, Any]) -> list[str]:
    return [str(doc[VIDEO_KEY][0])]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
    """The row's prompt; the video goes first, as lmms-eval's models place it (the ``<video>`` mark is dropped)."""
    return str(doc[PROMPT_KEY]).replace(VIDEO_PLACEHOLDER, "", 1).strip()


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return row_truth(dict(doc)).answer


def cited(qid: str, text: str, letters: str | None = None, rule: LetterRule = REPLY) -> dict[str, Any]:
    """The prediction record a reply makes: ``{"qid", "answer", "spans"}`` (the letter ``rule`` reads among
    ``letters``, the question's; spans as written, possibly none)."""
    glue = last_bounds(text, "glue")
    pairs = read_span_list(text[glue[1] : glue[2]]) if glue else None
    return {"qid": qid, "answer": letter_of(text, letters, rule), "spans": [list(p) for p in pairs or ()]}


def results(benchmark: str, doc: Mapping[str, Any], replies: Sequence[str]) -> dict[str, dict[str, Any]]:
    """One row's item for each metric of ``benchmark``: the prediction its reply makes and the row's truth."""
    truth = row_truth(dict(doc))
    reply = replies[0] if replies else ""
    prediction = cited(truth.qid, reply, truth.letters, get_benchmark(benchmark).letter_rule)
    item = {"benchmark": benchmark, "prediction": prediction, "truth": str(doc[ANSWER_KEY])}
    return {metric: {**item, "metric": metric} for metric in metric_names(benchmark)}


def nextgqa_results(doc: Mapping[str, Any], replies: Sequence[str]) -> dict[str, dict[str, Any]]:
    return results("nextgqa", doc, replies)


def rextime_results(doc: Mapping[str, Any], replies: Sequence[str]) -> dict[str, dict[str, Any]]:
    return results("rextime", doc, replies)


def cgbench_results(doc: Mapping[str, Any], replies: Sequence[str]) -> dict[str, dict[str, Any]]:
    return results("cgbench", doc, replies)


def aggregate(items: Sequence[Mapping[str, Any]]) -> float:
    """One metric over the task's rows (every item names the same benchmark and metric), as ``zoomzero score``
    computes it: the benchmark's official populations and span rule (percentages)."""
    first = items[0]
    truths = truths_from_rows({ANSWER_KEY: item["truth"]} for item in items)
    return float(score_predictions(first["benchmark"], [item["prediction"] for item in items], truths)[first["metric"]])
