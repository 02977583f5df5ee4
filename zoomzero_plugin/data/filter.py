"""Filter training rows with a model (Zoom-Zero App. A): drop the too easy and the weakly grounded.

For every row the model answers the coarse prompt (the row's own) N times (sampled, default 8). A row is
dropped when
  all_correct     every sample picks the right option (nothing left to learn), or
  weak_grounding  the samples' IoUs give GRPO no signal. --grounding-rule authors (default, the authors'
                  released examples/train_scripts/filter_variance.py): kept only if max IoU - mean IoU > --delta
                  (0.1) or every sample's IoU is > 0; --grounding-rule delta: kept only if max - mean >= --delta;
  no_ground_truth_spans  the row has no clue spans, so the IoUs cannot be computed.
So a row is kept when the model does not always answer it right AND its grounding varies (or always overlaps
the clue) -- both conditions, not either.

--quality-check (PLM-Video stage II rows, which carry a clue span) asks for the option letter only (the
zoom prompt, scored over the option letters) and adds, by name (--only-quality-check: these alone, no samples):
  clue        answers right from the clue span alone; else not_answerable_from_clue
  needs-clue  answers wrong from the whole video at the coarse budget; else answerable_without_clue
  both        (the default of a bare --quality-check) both of the above.
The paper (App. A) words its check one way and states its purpose another; the two readings are `clue` and
`needs-clue`, `both` satisfies either; the authors' release has no code for this check (docs/fidelity.md).

Writes the kept rows to --out (atomically), every row's samples and decision to OUT.decisions.jsonl
(a journal: a killed run resumes; a rerun with another --delta or --grounding-rule re-decides from the
stored samples) and counts by reason to OUT.summary.json.

example:
  zoomzero data filter --model CKPT --data plm_yt1b_mcqa.jsonl --out plm_stage2.jsonl --n 8 --quality-check
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError, UsageError
from ..files import check_writable, write_text
from ..gvqa.parsing import parse_response
from ..gvqa.zoom import plan_coarse, plan_zoom
from ..inference.backend import Request, SamplingParams, load_backend
from ..inference.options import (
    add_backend_arguments,
    add_budget_arguments,
    add_flag,
    add_resume_arguments,
    budget_from,
    check_values,
    flag,
    resolve,
)
from ..inference.passes import Question, answer_pass
from ..journal import Journal, check_settings
from ..rows import label_hidden, read_rows, write_rows
from ..spans import iou

GROUNDING_RULES = ("authors", "delta")
QUALITY_CHECKS = ("off", "clue", "needs-clue", "both")


@dataclass(frozen=True)
class FilterConfig:
    """How rows are judged. Sampling settings must match to resume; ``delta`` and ``grounding_rule`` may change."""

    n: int = 8
    """Samples per row."""
    temperature: float = 1.0
    top_p: float = 1.0
    delta: float = 0.1
    """IoU units: the max - mean IoU spread a row's samples need (see ``grounding_rule``)."""
    grounding_rule: str = "authors"
    """authors: spread > delta or min IoU > 0 (filter_variance.py) | delta: spread >= delta."""
    quality_check: str = "off"
    """off | clue | needs-clue | both (module docstring)."""
    variance: bool = True
    """Sample ``n`` answers and drop rows always answered right or weakly grounded; False: the quality check only."""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.grounding_rule not in GROUNDING_RULES:
            raise UsageError(f"grounding_rule must be one of {GROUNDING_RULES}, got {self.grounding_rule!r}")
        if self.quality_check not in QUALITY_CHECKS:
            raise UsageError(f"quality_check must be one of {QUALITY_CHECKS}, got {self.quality_check!r}")
        if not self.variance and self.quality_check == "off":
            raise UsageError("--only-quality-check needs --quality-check: nothing else would judge the rows")


def weak_grounding(ious: Sequence[float], delta: float, rule: str = "authors") -> bool:
    """Whether the samples' IoUs (each in [0, 1]) vary too little for the IoU reward to teach anything."""
    if not ious:
        return True
    spread = max(ious) - sum(ious) / len(ious)
    if rule == "authors":  # keep if (delta_iou > 0.1 or np.min(ious) > 0.0)
        return not (spread > delta or min(ious) > 0.0)
    if rule == "delta":
        return spread < delta - 1e-9  # 0.3 - mean(0.3, 0.1) is 0.1 in float arithmetic too: not below
    raise ValueError(f"grounding rule must be one of {GROUNDING_RULES}, got {rule!r}")


def decide(
    correct: Sequence[bool],
    ious: Sequence[float],
    has_spans: bool,
    delta: float,
    clue_correct: bool | None = None,
    full_correct: bool | None = None,
    rule: str = "authors",
    variance: bool = True,
) -> list[str]:
    """Why a row goes (empty: it stays). ``clue_correct``/``full_correct`` are None where that check did not run;
    ``variance`` False skips the sampled-answer criteria (all_correct, weak_grounding)."""
    reasons = []
    if variance and correct and all(correct):
        reasons.append("all_correct")
    if not has_spans:
        reasons.append("no_ground_truth_spans")
    elif variance and weak_grounding(ious, delta, rule):
        reasons.append("weak_grounding")
    if full_correct:
        reasons.append("answerable_without_clue")
    if clue_correct is False:
        reasons.append("not_answerable_from_clue")
    return reasons


def judge_rows(
    backend, rows: Sequence[dict[str, Any]], budget, cfg: FilterConfig, max_new_tokens: int, seed: int = 0
) -> list[dict[str, Any]]:
    """One decision record per row: samples' correctness and IoU, delta, quality checks, reasons, kept."""
    questions = [Question.from_row(r) for r in rows]
    truths = [q.truth for q in questions]
    coarse = [plan_coarse(q.duration, budget) for q in questions]
    params = SamplingParams(
        max_new_tokens=max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p, n=cfg.n, seed=seed
    )
    requests = [Request(q.coarse_prompt(), tuple(p.video_elements(q.video))) for q, p in zip(questions, coarse)]
    gens = backend.generate(requests, params) if cfg.variance else [None] * len(rows)
    clue: dict[int, bool] = {}
    full: dict[int, bool] = {}
    with_spans = [i for i, t in enumerate(truths) if t.spans]
    if cfg.quality_check in ("clue", "both"):
        checks = answer_pass(
            backend,
            [(questions[i], plan_zoom(truths[i].spans, truths[i].duration, budget)) for i in with_spans],
            "clue",
        )
        clue = {i: r.answer == truths[i].answer for i, r in zip(with_spans, checks)}
    if cfg.quality_check in ("needs-clue", "both"):
        checks = answer_pass(backend, [(questions[i], coarse[i]) for i in with_spans], "full")
        full = {i: r.answer == truths[i].answer for i, r in zip(with_spans, checks)}
    records = []
    for i, (truth, gen) in enumerate(zip(truths, gens)):
        parsed = [parse_response(o.text, truth.duration) for o in gen.outputs] if gen is not None else []
        correct = [p.answer == truth.answer for p in parsed]
        ious = [iou(list(p.spans), list(truth.spans)) for p in parsed]
        reasons = decide(
            correct, ious, bool(truth.spans), cfg.delta, clue.get(i), full.get(i), cfg.grounding_rule, cfg.variance
        )
        records.append(
            {
                "qid": truth.qid,
                "kept": not reasons,
                "reasons": reasons,
                "correct": sum(correct),
                "samples": len(correct),
                "ious": [round(x, 4) for x in ious],
                "delta": round(max(ious) - sum(ious) / len(ious), 4) if ious else 0.0,
                "clue_correct": clue.get(i),
                "full_correct": full.get(i),
                "has_spans": bool(truth.spans),
            }
        )
    return records


def filter_rows(
    backend,
    rows: list[dict[str, Any]],
    out: str | Path,
    budget,
    cfg: FilterConfig = FilterConfig(),
    max_new_tokens: int = 512,
    batch_size: int = 1,
    progress: bool = True,
    settings: dict[str, Any] | None = None,
    repair: bool = False,
    source: str = "the data",
) -> dict[str, Any]:
    """Judge every row (resuming from OUT.decisions.jsonl), write the kept rows and the summary; return it.

    The samples of a resumed run must come from the same settings (``settings`` + sampling + budget, kept
    in OUT.filter.json; ResumeError naming the differences); ``delta`` and ``grounding_rule`` may change:
    reasons are decided again from the stored samples. Bad rows raise one DataError first; ``repair`` as in
    :func:`zoomzero_plugin.eval.runner.evaluate`.
    """
    from tqdm import tqdm

    out = Path(out)
    questions = Question.from_rows(rows, source)
    qids = [q.qid for q in questions]
    hidden = [q.qid for q in questions if label_hidden(q.truth)]
    if hidden:
        raise DataError(
            f"{len(hidden)} rows have hidden labels (a test split), e.g. {hidden[:3]}: the filter judges "
            "answers against labels"
        )
    sampling = {k: v for k, v in asdict(cfg).items() if k not in ("delta", "grounding_rule")}
    journal = out.with_name(out.stem + ".decisions.jsonl")
    check_settings(
        out.with_name(out.stem + ".filter.json"),
        {**(settings or {}), **sampling, "budget": asdict(budget), "max_new_tokens": max_new_tokens},
        results=journal.is_file() and journal.stat().st_size > 0,
        repair=repair,
        name=lambda key: flag(key.rsplit(".", 1)[-1]),
    )
    decisions = Journal(journal, repair=repair)
    todo = [i for i, q in enumerate(qids) if q not in decisions.done]
    with tqdm(total=len(rows), initial=len(rows) - len(todo), unit="row", desc="filter", disable=not progress) as bar:
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            decisions.append(
                judge_rows(backend, [rows[i] for i in batch], budget, cfg, max_new_tokens, seed=cfg.seed + batch[0])
            )
            bar.update(len(batch))
    by_qid = {r["qid"]: _redecide(r, cfg) for r in decisions.records}
    kept = [row for row, q in zip(rows, qids) if by_qid[q]["kept"]]
    write_rows(out, kept)
    reasons = Counter(reason for q in qids for reason in by_qid[q]["reasons"])
    summary = {
        "rows": len(rows),
        "kept": len(kept),
        "dropped": len(rows) - len(kept),
        "reasons": dict(reasons),
        "config": asdict(cfg),
        "out": str(out),
    }
    write_text(out.with_name(out.stem + ".summary.json"), json.dumps(summary, indent=2) + "\n")
    return summary


def _redecide(record: dict[str, Any], cfg: FilterConfig) -> dict[str, Any]:
    correct = [i < record["correct"] for i in range(record["samples"])]
    reasons = decide(
        correct,
        record["ious"],
        record["has_spans"],
        cfg.delta,
        record["clue_correct"],
        record["full_correct"],
        cfg.grounding_rule,
        cfg.variance,
    )
    return {**record, "reasons": reasons, "kept": not reasons}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="checkpoint path or hub id that judges the rows")
    parser.add_argument("--data", required=True, help="rows to filter (.jsonl or .parquet)")
    parser.add_argument("--out", required=True, help="where the kept rows go (.jsonl or .parquet)")
    parser.add_argument("--n", type=int, default=8, help="samples per row (default: 8)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default: 1.0)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (default: 1.0)")
    parser.add_argument(
        "--delta",
        type=float,
        default=FilterConfig.delta,
        help=f"max IoU - mean IoU spread a row needs (default: {FilterConfig.delta})",
    )
    parser.add_argument(
        "--grounding-rule",
        choices=GROUNDING_RULES,
        default=FilterConfig.grounding_rule,
        help="authors: keep rows whose spread > --delta or whose samples all overlap the clue "
        "(the authors' filter_variance.py, default); delta: keep rows whose spread >= --delta",
    )
    parser.add_argument(
        "--quality-check",
        choices=QUALITY_CHECKS,
        nargs="?",
        const="both",
        default=FilterConfig.quality_check,
        help="rows with a clue span: clue = keep rows answered right from the clue span alone; "
        "needs-clue = keep rows answered wrong from the whole video; both (a bare "
        "--quality-check) = both; off (default)",
    )
    parser.add_argument(
        "--only-quality-check",
        action="store_true",
        help="judge rows by the quality check alone: no sampled answers, no all_correct / "
        "weak_grounding (stage II's PLM-Video rows)",
    )
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    add_backend_arguments(parser, "rows")
    parser.add_argument("--limit", type=int, help="filter only the first N rows")
    add_resume_arguments(parser, "decisions (OUT.decisions.jsonl)", "OUT.filter.json")
    add_budget_arguments(parser)
    add_flag(parser, "max_new_tokens", "response tokens per sample", type=int)


def run(args: argparse.Namespace) -> int:
    if args.n < 1 or not 0 < args.top_p <= 1 or not args.temperature > 0 or args.batch_size < 1:
        raise UsageError("need --n >= 1, --temperature > 0, 0 < --top-p <= 1, --batch-size >= 1")
    if not Path(args.data).is_file():
        raise UsageError(f"--data {args.data}: no such file")
    check_writable(args.out, "--out")
    values = resolve(args)
    check_values(values)
    rows = read_rows(args.data)[: args.limit]
    if not rows:
        raise DataError(f"--data {args.data} holds no rows")
    Question.from_rows(rows, args.data)  # every bad row, before the model loads
    if args.restart:
        out = Path(args.out)
        for suffix in (".decisions.jsonl", ".filter.json"):
            out.with_name(out.stem + suffix).unlink(missing_ok=True)
    backend = load_backend(args.backend, args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    cfg = FilterConfig(
        n=args.n,
        temperature=args.temperature,
        top_p=args.top_p,
        delta=args.delta,
        grounding_rule=args.grounding_rule,
        quality_check=args.quality_check,
        variance=not args.only_quality_check,
        seed=args.seed,
    )
    settings = {"model": str(args.model), "data": str(Path(args.data).resolve()), "backend": args.backend}
    values = resolve(args, geometry=backend.geometry)  # per-frame bounds in the model's pixels
    check_values(values)
    summary = filter_rows(
        backend,
        rows,
        args.out,
        budget_from(values, backend.geometry),
        cfg,
        max_new_tokens=values["max_new_tokens"],
        batch_size=args.batch_size,
        progress=not args.no_progress,
        settings=settings,
        repair=args.repair,
        source=str(args.data),
    )
    print(json.dumps(summary, indent=2))
    return 0
