"""The benchmarks' official metrics, from prediction records and ground truths.

``score_predictions(benchmark, predictions, truths, reduction)`` → a flat dict of metrics (percentages,
0–100, as the papers print them) and counts (ints). Each benchmark is a :class:`Benchmark` in
``BENCHMARKS``: its official span reduction (see :mod:`.reductions`), which questions its scripts count
for accuracy and for grounding, a function of those two populations, and its paper table layout.

Denominators follow each official script (docs/metrics.md has the table):
- nextgqa: Acc@QA over all questions; grounding and Acc@GQA over questions that have a prediction.
- rextime: every question (its script requires a prediction for each); a missing one scores 0.
- cgbench: accuracy over questions with an answer letter; grounding over questions with a prediction;
  acc.@IoU over questions with both.
- videomme: accuracy over questions with an answer letter; lvbench: over questions with a prediction;
  mlvu and longvideobench: over all questions.
- rows: every question (missing = wrong, IoU 0).

A prediction's answer is read when it is scored, among the question's own options, by the benchmark's letter rule
(:attr:`Benchmark.letter_rule`): its official script's reply reader where it has one that fits this package's
prompts (Video-MME, LongVideoBench, LVBench, CG-Bench), lmms-eval 0.7.3's for MLVU (whose own script reads replies
to a ``Best option: (`` pre-fill), this package's :data:`~zoomzero_plugin.answers.REPLY` otherwise.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from ..answers import CGBENCH, LONGVIDEOBENCH, LVBENCH, MLVU, REPLY, VIDEOMME, LetterRule, letter_of
from ..errors import DataError
from ..ground_truth import GroundTruth
from ..rows import bad_rows, label_hidden, row_problem, row_truth
from ..spans import total_length
from .predictions import Prediction, index_predictions
from .reductions import REDUCTIONS, ZERO, invalid_count

REDUCTION_CHOICES = ("official", "union")
# truth.extra keys that get a per-value accuracy breakdown (Video-MME's results file calls its
# short/medium/long field "duration_category"; GroundTruth.duration is the video length in seconds).
BREAKDOWN_KEYS = (
    "duration_category",
    "task_type",
    "question_type",
    "category",
    "sub_category",
    "domain",
    "duration_group",
    "question_category",
)
CG_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass(frozen=True)
class QuestionScore:
    """One question, scored. Overlaps are fractions in [0, 1]; 0 when there is no prediction."""

    qid: str
    predicted: bool  # a record exists
    answer: str | None  # the predicted letter
    correct: bool
    grounded: bool  # the truth has spans
    iou: float
    iop: float
    iog: float
    invalid_spans: int
    gt_length: float  # seconds, union of the truth's spans
    duration: float  # seconds
    extra: Mapping[str, Any] = field(default_factory=dict)


def score_question(
    truth: GroundTruth, pred: Prediction | None, rule: str, letters: LetterRule = REPLY
) -> QuestionScore:
    """Score one question (``pred`` None: missing) under a rule of ``REDUCTIONS`` (first | merged | union), its
    answer read by ``letters`` among the question's options."""
    grounded = bool(truth.spans)
    overlap = REDUCTIONS[rule](pred.spans, truth) if pred is not None and grounded else ZERO
    answer = letter_of(pred.answer, truth.letters, letters) if pred is not None else None
    return QuestionScore(
        qid=truth.qid,
        predicted=pred is not None,
        answer=answer,
        correct=answer is not None and answer == truth.answer,
        grounded=grounded,
        iou=overlap.iou,
        iop=overlap.iop,
        iog=overlap.iog,
        invalid_spans=invalid_count(pred.spans, truth) if pred is not None else 0,
        gt_length=total_length(truth.spans),
        duration=truth.duration,
        extra=truth.extra,
    )


# --- populations: which questions a script counts -------------------------------------------------

Population = Callable[[Sequence[QuestionScore]], list[QuestionScore]]


def everyone(scores: Sequence[QuestionScore]) -> list[QuestionScore]:
    return list(scores)


def predicted(scores: Sequence[QuestionScore]) -> list[QuestionScore]:
    return [q for q in scores if q.predicted]


def answered(scores: Sequence[QuestionScore]) -> list[QuestionScore]:
    return [q for q in scores if q.answer is not None]


def grounded(population: Population) -> Population:
    return lambda scores: [q for q in population(scores) if q.grounded]


def nobody(scores: Sequence[QuestionScore]) -> list[QuestionScore]:
    return []


# --- small measures (percent) ---------------------------------------------------------------------


def rate(flags: Iterable[bool]) -> float:
    flags = list(flags)
    return 100.0 * sum(flags) / len(flags) if flags else 0.0


def mean_pct(values: Iterable[float]) -> float:
    values = list(values)
    return 100.0 * fmean(values) if values else 0.0


def _at(prefix: str, attr: str, qs: Sequence[QuestionScore], thresholds: Iterable[float]) -> dict[str, float]:
    return {f"{prefix}@{t}": rate(getattr(q, attr) >= t for q in qs) for t in thresholds}


# --- per-benchmark metrics: (accuracy population, grounding population) -> metrics ----------------


def nextgqa_metrics(acc: Sequence[QuestionScore], ground: Sequence[QuestionScore]) -> dict[str, float]:
    return {
        "Acc@QA": rate(q.correct for q in acc),
        "Acc@GQA": rate(q.correct and q.iop >= 0.5 for q in ground),
        "mIoP": mean_pct(q.iop for q in ground),
        **_at("IoP", "iop", ground, (0.3, 0.5)),
        "mIoU": mean_pct(q.iou for q in ground),
        **_at("IoU", "iou", ground, (0.3, 0.5)),
        "mIoG": mean_pct(q.iog for q in ground),
    }


def rextime_metrics(acc: Sequence[QuestionScore], ground: Sequence[QuestionScore]) -> dict[str, float]:
    return {
        "mIoU": mean_pct(q.iou for q in ground),
        **_at("R1", "iou", ground, (0.3, 0.5, 0.7)),
        "Acc": rate(q.correct for q in acc),
        **{f"Acc@IoU>={t}": rate(q.correct and q.iou >= t for q in ground) for t in (0.3, 0.5, 0.7)},
        "mIoG": mean_pct(q.iog for q in ground),
    }


def cgbench_metrics(acc: Sequence[QuestionScore], ground: Sequence[QuestionScore]) -> dict[str, float]:
    both = [q for q in ground if q.answer is not None]
    rec = _at("rec@IoU", "iou", ground, CG_THRESHOLDS)
    acc_at = {f"acc@IoU@{t}": rate(q.correct and q.iou >= t for q in both) for t in CG_THRESHOLDS}
    return {
        "Acc": rate(q.correct for q in acc),
        "mIoU": mean_pct(q.iou for q in ground),
        "rec.@IoU": fmean(rec.values()),
        "acc.@IoU": fmean(acc_at.values()),
        "mIoG": mean_pct(q.iog for q in ground),
        **rec,
        **acc_at,
        "scored_both": len(both),
    }


def mcq_metrics(acc: Sequence[QuestionScore], ground: Sequence[QuestionScore]) -> dict[str, float]:
    return {"Acc": rate(q.correct for q in acc)}


def mlvu_metrics(acc: Sequence[QuestionScore], ground: Sequence[QuestionScore]) -> dict[str, float]:
    """MLVU's script prints per-task accuracy and their micro average; M-Avg (its paper) is the macro one."""
    out = mcq_metrics(acc, ground)
    key = next((k for k in ("task_type", "question_type", "category") if any(k in q.extra for q in acc)), None)
    if key is not None:
        per_task = breakdown(acc, key)
        out["M-Avg"] = fmean(v for k, v in per_task.items() if k.startswith("Acc["))
    return out


def rows_metrics(acc: Sequence[QuestionScore], ground: Sequence[QuestionScore]) -> dict[str, float]:
    return {
        "Acc": rate(q.correct for q in acc),
        "mIoU": mean_pct(q.iou for q in ground),
        **_at("IoU", "iou", ground, (0.3, 0.5, 0.7)),
        "mIoP": mean_pct(q.iop for q in ground),
        "mIoG": mean_pct(q.iog for q in ground),
    }


def breakdown(acc: Sequence[QuestionScore], key: str) -> dict[str, float | int]:
    """``Acc[key=value]`` and ``n[key=value]`` for each value of ``extra[key]`` (a list counts in each)."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for q in acc:
        values = q.extra.get(key)
        for v in values if isinstance(values, (list, tuple)) else [values]:
            if v is not None:
                groups[str(v)].append(q.correct)
    out: dict[str, float | int] = {}
    for value in sorted(groups):
        out[f"Acc[{key}={value}]"] = rate(groups[value])
        out[f"n[{key}={value}]"] = len(groups[value])
    return out


# --- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    name: str
    official: str  # reduction rule name in REDUCTIONS
    accuracy_population: Population
    grounding_population: Population
    metrics: Callable[[Sequence[QuestionScore], Sequence[QuestionScore]], dict[str, float]]
    columns: tuple[str | tuple[str, str], ...]  # the paper's table: metric keys, or (header, key)
    source: str  # the official script these definitions follow
    letter_rule: LetterRule = REPLY  # how a reply's letter is read: the official script's rule, where it has one

    def table(self) -> list[tuple[str, str]]:
        """(header, metric key) of each column of the paper's table."""
        return [c if isinstance(c, tuple) else (c, c) for c in self.columns]


BENCHMARKS: dict[str, Benchmark] = {}


def register(benchmark: Benchmark) -> Benchmark:
    BENCHMARKS[benchmark.name] = benchmark
    return benchmark


register(
    Benchmark(
        "nextgqa",
        official="first",
        accuracy_population=everyone,
        grounding_population=grounded(predicted),
        metrics=nextgqa_metrics,
        source="doc-doc/NExT-GQA code/TempGQA/eval_ground.py",
        columns=("Acc@QA", "Acc@GQA", "mIoP", "IoP@0.3", "IoP@0.5", "mIoU", "IoU@0.3", "IoU@0.5", "mIoG"),
    )
)
register(
    Benchmark(
        "rextime",
        official="first",
        accuracy_population=everyone,
        grounding_population=grounded(everyone),
        metrics=rextime_metrics,
        source="ReXTime/ReXTime evaluation/rextime_eval.py",
        columns=("mIoU", "R1@0.3", "R1@0.5", "R1@0.7", "Acc", ("Acc@IoU≥0.5", "Acc@IoU>=0.5"), "mIoG"),
    )
)
register(
    Benchmark(
        "cgbench",
        official="merged",
        accuracy_population=answered,
        grounding_population=grounded(predicted),
        metrics=cgbench_metrics,
        source="CG-Bench/CG-Bench run/utils.py, run/stat_with_key.py",
        letter_rule=CGBENCH,
        columns=(("long-acc.", "Acc"), "mIoU", "rec.@IoU", "acc.@IoU", "mIoG"),
    )
)
register(
    Benchmark(
        "videomme",
        official="union",
        accuracy_population=answered,
        grounding_population=nobody,
        metrics=mcq_metrics,
        source="BradyFU/Video-MME evaluation/eval_your_results.py",
        letter_rule=VIDEOMME,
        columns=(
            ("Short", "Acc[duration_category=short]"),
            ("Medium", "Acc[duration_category=medium]"),
            ("Long", "Acc[duration_category=long]"),
            ("Overall", "Acc"),
        ),
    )
)
register(
    Benchmark(
        "mlvu",
        official="union",
        accuracy_population=everyone,
        grounding_population=nobody,
        metrics=mlvu_metrics,
        source="JUNJIE99/MLVU (M-Avg, as lmms-eval's mlvu_dev)",
        columns=("M-Avg", "Acc"),
        letter_rule=MLVU,
    )
)
register(
    Benchmark(
        "lvbench",
        official="union",
        accuracy_population=predicted,
        grounding_population=nobody,
        metrics=mcq_metrics,
        source="THUDM/LVBench lvbench/metrics/compute_accuracy.py",
        columns=(("Overall", "Acc"),),
        letter_rule=LVBENCH,
    )
)
register(
    Benchmark(
        "longvideobench",
        official="union",
        accuracy_population=everyone,
        grounding_population=nobody,
        metrics=mcq_metrics,
        source="longvideobench/LongVideoBench via lmms-eval tasks/longvideobench/utils.py",
        letter_rule=LONGVIDEOBENCH,
        columns=(
            ("8–15 s", "Acc[duration_group=15]"),
            ("15–60 s", "Acc[duration_group=60]"),
            ("3–10 min", "Acc[duration_group=600]"),
            ("15–60 min", "Acc[duration_group=3600]"),
            ("Overall", "Acc"),
        ),
    )
)
register(
    Benchmark(
        "rows",
        official="union",
        accuracy_population=everyone,
        grounding_population=grounded(everyone),
        metrics=rows_metrics,
        source="this project's grounded-QA rows (the iou reward's union rule)",
        columns=("Acc", "mIoU", "IoU@0.3", "IoU@0.5", "IoU@0.7", "mIoP", "mIoG"),
    )
)


def get_benchmark(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def reduction_rule(benchmark: str, reduction: str) -> str:
    """The rule name in REDUCTIONS that ``reduction`` ("official" | "union") means for ``benchmark``."""
    if reduction not in REDUCTION_CHOICES:
        raise ValueError(f"unknown reduction {reduction!r}; choose from {', '.join(REDUCTION_CHOICES)}")
    return get_benchmark(benchmark).official if reduction == "official" else "union"


def score_questions(
    benchmark: str,
    predictions: Iterable[Mapping[str, Any]],
    truths: Mapping[str, GroundTruth],
    reduction: str = "official",
) -> tuple[list[QuestionScore], int]:
    """Every truth's :class:`QuestionScore` (in ``truths`` order), and the number of duplicate records.

    Raises ValueError for an unknown benchmark or reduction, or predictions whose qids are not in ``truths``.
    """
    rule, letters = reduction_rule(benchmark, reduction), get_benchmark(benchmark).letter_rule
    by_qid, duplicates = index_predictions(predictions)
    unknown = [q for q in by_qid if q not in truths]
    if unknown:
        raise ValueError(f"{len(unknown)} predicted qid(s) are not in the data, e.g. {unknown[:5]}")
    return [score_question(t, by_qid.get(qid), rule, letters) for qid, t in truths.items()], duplicates


def aggregate(benchmark: str, scores: Sequence[QuestionScore], duplicates: int = 0) -> dict[str, float | int]:
    """The benchmark's metrics, per-category accuracy breakdowns and counts from scored questions."""
    bench = get_benchmark(benchmark)
    acc, ground = bench.accuracy_population(scores), bench.grounding_population(scores)
    out: dict[str, float | int] = dict(bench.metrics(acc, ground))
    for key in BREAKDOWN_KEYS:
        out.update(breakdown(acc, key))
    n_predicted = sum(q.predicted for q in scores)
    out.update(
        questions=len(scores),
        predicted=n_predicted,
        missing=len(scores) - n_predicted,
        duplicates=duplicates,
        no_answer=sum(q.predicted and q.answer is None for q in scores),
        invalid_spans=sum(q.invalid_spans for q in scores),
        scored_accuracy=len(acc),
        scored_grounding=len(ground),
    )
    return out


def score_predictions(
    benchmark: str,
    predictions: list[dict],
    truths: dict[str, GroundTruth],
    reduction: str = "official",
) -> dict[str, float | int]:
    """Official metrics of ``benchmark`` (nextgqa, rextime, cgbench, videomme, mlvu, lvbench, rows).

    ``predictions``: records ``{"qid", "answer", "spans", "confidence"}`` (duplicate qids: the last wins,
    counted in ``duplicates``). ``reduction``: "official" (the benchmark script's rule for several spans)
    or "union" (all predicted spans merged, as the iou reward does). Rates are percentages.
    """
    scores, duplicates = score_questions(benchmark, predictions, truths, reduction)
    return aggregate(benchmark, scores, duplicates)


def source_mismatch(benchmark: str, truths: Mapping[str, GroundTruth]) -> str | None:
    """A sentence when the rows' ``source`` (written by ``zoomzero data convert``) names another registered
    benchmark than ``benchmark``; None when they agree, carry no source, or ``benchmark`` is ``rows``."""
    if benchmark == "rows":
        return None
    sources = Counter(str(t.extra.get("source")) for t in truths.values() if t.extra.get("source"))
    others = {name: n for name, n in sources.items() if name in BENCHMARKS and name != benchmark}
    if not others:
        return None
    name, n = max(others.items(), key=lambda kv: kv[1])
    return (
        f"{n} of {len(truths)} rows come from {name} (their 'source'), scored here with {benchmark}'s metrics; "
        f"for {name}'s own definitions use --benchmark {name}"
    )


def truths_from_rows(
    rows: Iterable[Mapping[str, Any]], allow_hidden: bool = False, source: str = "the data"
) -> dict[str, GroundTruth]:
    """qid → GroundTruth of dataset rows. Raises DataError naming ``source`` and the bad rows (row number counted
    from 1, qid, what is wrong: an unreadable answer column, a repeated qid, or a label hidden behind the
    benchmark's server — a test split — unless ``allow_hidden``: its answer is only a placeholder)."""
    truths: dict[str, GroundTruth] = {}
    problems, hidden, first = [], [], {}
    for number, row in enumerate(rows, 1):
        try:
            truth = row_truth(dict(row))
        except (KeyError, ValueError, TypeError) as e:
            problems.append(row_problem(number, row, e))
            continue
        if truth.qid in truths:
            problems.append(f"row {number}: question id {truth.qid!r} repeats row {first[truth.qid]}")
            continue
        if label_hidden(truth) and not allow_hidden:
            hidden.append(f"row {number} ({truth.qid})")
        first[truth.qid] = number
        truths[truth.qid] = truth
    if problems:
        raise bad_rows(source, problems)
    if hidden:
        raise DataError(
            f"{source}: {len(hidden)} row(s) have a hidden label, e.g. {hidden[0]}: a test split is "
            "scored only by the benchmark's server; write a submission with `zoomzero score --export "
            "rextime` instead"
        )
    return truths
