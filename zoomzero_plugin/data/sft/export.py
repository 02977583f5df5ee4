"""Export VideoZoomer cold-start SFT data for LLaMA-Factory: verified <video_zoom> trajectories as sharegpt.

Trajectories come from one or more --source:
  teacher      a teacher model behind any OpenAI-compatible endpoint plays the agent on --data rows
               (--teacher-url, --teacher-model; API key from $OPENAI_API_KEY or --teacher-api-key-env)
  predictions  transcripts of `zoomzero eval --mode agent` runs (--predictions, one or several sampled runs):
               only verified-correct trajectories are kept (rejection sampling)
  reflection   failures in --predictions (wrong answer after >= 1 call) corrected by the teacher, continuing
               the failed trajectory without its final turn (the authors' reflection data)
Every trajectory is replayed through the agent environment and dropped, counted by reason, when a turn is
malformed, a call breaks a budget or is refused, or the answer is missing or wrong.

OUT/ gets videozoomer_sft.jsonl (messages: system, user, assistant, tool replies; images: one PNG per frame in
turn order, each preceded in the text by its <frame{i}_time{t}s> label), images/, dataset_info.json and
summary.json. Every sample is then run through LLaMA-Factory's own converter, template and tokenizer (--model:
a Qwen2.5-VL or Qwen3-VL folder; tokenizer and processor files suffice): a wrong role order, a wrong image count or a
sample longer than --cutoff-len stops the export naming the sample (--drop-long drops the long ones instead).
OUT appears whole or not at all. Teacher replies are journalled (--journal): a killed run, started again with
the same command, sends only what is missing.

examples:
  zoomzero data export-sft --format llamafactory --source teacher --data rows.jsonl \\
      --teacher-url http://127.0.0.1:8000/v1 --teacher-model Qwen2.5-VL-72B-Instruct \\
      --model /models/Qwen2.5-VL-7B-Instruct --out data/videozoomer_sft
  zoomzero data export-sft --format llamafactory --source predictions --source reflection --data rows.jsonl \\
      --predictions runs/agent-s1/predictions.jsonl runs/agent-s2/predictions.jsonl \\
      --teacher-url http://127.0.0.1:8000/v1 --teacher-model TEACHER --model /models/Qwen2.5-VL-7B-Instruct \\
      --out data/videozoomer_sft
then: llamafactory-cli train yamls/videozoomer_sft.yaml dataset_dir=data/videozoomer_sft
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ...agent import AgentBudget, VideoInfo
from ...agent.frames import probe
from ...errors import DataError, UsageError, VideoError
from ...files import write_json, write_text
from ...inference.options import add_agent_budget_flags
from ...rows import read_rows
from .llamafactory import CHECK_DEFAULTS, check_with_llamafactory
from .sharegpt import (
    DATASET_NAME,
    OBSERVATION_ROLES,
    Sample,
    build_sample,
    dataset_info,
    jsonl,
    structure_problems,
    write_frames,
)
from .sources import (
    SOURCES,
    AgentQuestion,
    Candidate,
    ReplyJournal,
    TeacherSession,
    VideoFrames,
    prediction_candidates,
    questions_from_rows,
    read_transcripts,
    reflection_candidates,
    teacher_candidates,
)
from .teacher import TeacherClient, TeacherConfig

SUMMARY, FILE = "summary.json", DATASET_NAME + ".jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    io = parser.add_argument_group("what to export")
    io.add_argument("--format", choices=("llamafactory",), required=True, help="dataset format (llamafactory)")
    io.add_argument(
        "--source",
        choices=SOURCES,
        action="append",
        required=True,
        help="where trajectories come from; repeat to combine (see above)",
    )
    io.add_argument("--data", required=True, help="dataset rows (.jsonl/.parquet): videos, questions, answers")
    io.add_argument("--predictions", nargs="+", default=[], help="predictions.jsonl of `zoomzero eval --mode agent`")
    io.add_argument("--out", required=True, help="output folder (created whole at the end)")
    io.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    io.add_argument("--name", default=DATASET_NAME, help=f"dataset name in dataset_info.json ({DATASET_NAME})")
    io.add_argument("--limit", type=int, help="use only the first N rows")
    io.add_argument("--min-calls", type=int, default=0, help="drop trajectories with fewer successful calls (0)")
    io.add_argument("--per-question", type=int, help="keep at most this many trajectories per question and source")
    io.add_argument(
        "--observation-role",
        choices=OBSERVATION_ROLES,
        default="user",
        help="role of the tool's replies (user: the exact texts the released model reads; "
        "observation: LLaMA-Factory wraps them in <tool_response>)",
    )
    io.add_argument("--no-progress", action="store_true", help="no progress bars")

    t = parser.add_argument_group("teacher (sources teacher and reflection)")
    t.add_argument("--teacher-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    t.add_argument("--teacher-model", help="model name the endpoint serves")
    t.add_argument("--teacher-api-key-env", default="OPENAI_API_KEY", help="env var holding the API key")
    t.add_argument("--teacher-temperature", type=float, default=1.0, help="sampling temperature (1.0, as the authors)")
    t.add_argument(
        "--teacher-max-new-tokens",
        type=int,
        help=f"tokens per teacher turn (default: --max-new-tokens, {AgentBudget.max_new_tokens})",
    )
    t.add_argument("--teacher-rpm", type=float, default=0.0, help="requests per minute at most (0: no limit)")
    t.add_argument("--teacher-retries", type=int, default=6, help="retries of a failed request (6)")
    t.add_argument("--teacher-timeout", type=float, default=300.0, help="seconds per request (300)")
    t.add_argument("--teacher-workers", type=int, default=4, help="trajectories played at once (4)")
    t.add_argument("--samples", type=int, default=1, help="teacher trajectories per question (1)")
    t.add_argument(
        "--prompt",
        choices=("sft", "train", "eval"),
        default="sft",
        help="prompt variant the teacher plays with (sft: the authors' data-generation prompt)",
    )
    t.add_argument("--journal", help="teacher reply journal (default: OUT.journal.jsonl beside --out)")
    t.add_argument("--restart", action="store_true", help="discard the journal and ask the teacher again")

    c = parser.add_argument_group("LLaMA-Factory check (measured with its own template and tokenizer)")
    c.add_argument(
        "--model", help="Qwen-VL model folder (Qwen2.5-VL, Qwen3-VL) whose tokenizer/processor the training uses"
    )
    c.add_argument(
        "--recipe",
        help="read template, cutoff_len, image_max_pixels (and the model) from this "
        "LLaMA-Factory yaml, e.g. yamls/videozoomer_sft.yaml",
    )
    c.add_argument("--template", help=f"LLaMA-Factory template ({CHECK_DEFAULTS['template']})")
    c.add_argument("--cutoff-len", type=int, help=f"LLaMA-Factory cutoff_len ({CHECK_DEFAULTS['cutoff_len']})")
    c.add_argument("--image-max-pixels", type=int, help=f"image_max_pixels ({CHECK_DEFAULTS['image_max_pixels']})")
    c.add_argument("--drop-long", action="store_true", help="drop samples over the cutoff (reason over_cutoff)")
    c.add_argument(
        "--no-llamafactory-check",
        action="store_true",
        help="skip the check (role order and image counts are still checked)",
    )

    add_agent_budget_flags(parser.add_argument_group("agent budgets (the paper's defaults)"), "")


def _budget(args: argparse.Namespace) -> AgentBudget:
    values = {f.name: getattr(args, f.name) for f in fields(AgentBudget) if getattr(args, f.name) is not None}
    try:
        return AgentBudget(**values)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_usage(args: argparse.Namespace) -> None:
    sources = set(args.source)
    needs_teacher = sources & {"teacher", "reflection"}
    if needs_teacher and not (args.teacher_url and args.teacher_model):
        raise UsageError(f"--source {' and '.join(sorted(needs_teacher))} needs --teacher-url and --teacher-model")
    if sources & {"predictions", "reflection"} and not args.predictions:
        raise UsageError("--source predictions/reflection needs --predictions FILE [FILE ...]")
    if not args.no_llamafactory_check and not (args.model or args.recipe):
        raise UsageError(
            "the LLaMA-Factory check needs --model (a local Qwen-VL model folder) or --recipe; "
            "or pass --no-llamafactory-check"
        )
    for name in ("samples", "teacher_workers"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 1")
    if args.per_question is not None and args.per_question < 1:
        raise UsageError("--per-question must be >= 1")
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise UsageError(f"--out {out} exists; pass --overwrite to replace it")
    if not Path(args.data).is_file():
        raise UsageError(f"--data {args.data}: no such file")


def _check_settings(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    recipe: dict[str, Any] = dict(CHECK_DEFAULTS)
    model = args.model
    if args.recipe:
        import yaml

        try:
            loaded = yaml.safe_load(Path(args.recipe).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as e:
            raise UsageError(f"--recipe {args.recipe}: cannot read it ({str(e).splitlines()[0]})") from None
        if not isinstance(loaded, dict):
            raise UsageError(f"--recipe {args.recipe}: not a LLaMA-Factory yaml mapping")
        recipe.update(
            {k: loaded[k] for k in ("template", "cutoff_len", "image_max_pixels", "image_min_pixels") if k in loaded}
        )
        model = model or loaded.get("model_name_or_path")
    for key in ("template", "cutoff_len", "image_max_pixels"):
        if getattr(args, key) is not None:
            recipe[key] = getattr(args, key)
    return recipe, model


def _videos(questions: dict[str, AgentQuestion]) -> dict[str, VideoInfo]:
    """Probe every video once, before any request; VideoError names the first unreadable ones."""
    infos, bad = {}, []
    for path in sorted({q.video for q in questions.values()}):
        try:
            infos[path] = probe(path)
        except VideoError as e:
            bad.append(str(e))
    if bad:
        raise VideoError(f"{len(bad)} video(s) cannot be read: " + "; ".join(bad[:3]))
    return infos


def _select(candidates: Sequence[Candidate], per_question: int | None) -> tuple[list[Candidate], Counter]:
    """Verified candidates, duplicates (same turns for the same question) and those over ``per_question``
    dropped; returns them and the drop counts by reason."""
    kept, dropped, seen = [], Counter(), set()
    per: Counter = Counter()
    for c in candidates:
        if not c.verdict.keep:
            dropped[c.verdict.reason] += 1
            continue
        key = (c.qid, tuple(s.turn.text for s in c.verdict.trajectory.steps))
        if key in seen:
            dropped["duplicate"] += 1
            continue
        if per_question is not None and per[(c.source, c.qid)] >= per_question:
            dropped["over_per_question"] += 1
            continue
        seen.add(key)
        per[(c.source, c.qid)] += 1
        kept.append(c)
    return kept, dropped


def _slug(text: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)[:60]
    return safe if safe == text else f"{safe}-{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def _ids(kept: Sequence[Candidate]) -> list[str]:
    return [f"{c.source}-{_slug(c.qid)}-{c.index}" for c in kept]


def build_samples(kept: Sequence[Candidate], observation_role: str) -> list[Sample]:
    samples = [
        build_sample(i, c.source, c.qid, c.verdict.trajectory, c.user_text, observation_role)
        for i, c in zip(_ids(kept), kept)
    ]
    problems = [f"{s.id}: {p}" for s in samples for p in structure_problems(s)]
    if problems:
        raise DataError(f"{len(problems)} sample(s) are not trainable as built: " + "; ".join(problems[:5]))
    return samples


def write_dataset(samples: Sequence[Sample], stage: Path, budget: AgentBudget, name: str, progress: bool) -> None:
    """Decode and save every sample's frames (one decode per video and sample), the JSONL and dataset_info."""
    from tqdm import tqdm

    for sample in tqdm(samples, desc="frames", unit="sample", disable=not progress):
        write_frames(sample, VideoFrames(sample.video, budget).get(sample.frames), stage)
    write_text(stage / FILE, jsonl([s.row() for s in samples]))
    write_json(stage / "dataset_info.json", dataset_info(name, FILE))


def _publish(stage: Path, out: Path) -> None:
    """Move the finished staging folder to ``out`` (replacing an old one only now)."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{stage.name}")
        out.rename(old)
    stage.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    _check_usage(args)
    budget = _budget(args)
    recipe, model = _check_settings(args)
    out = Path(args.out)
    try:
        rows = read_rows(args.data)[: args.limit]
    except (OSError, ValueError) as e:
        raise DataError(f"--data {args.data}: {e}") from None
    questions = questions_from_rows(rows, args.data)
    transcripts, torn = _transcripts(args, questions)
    videos = _videos(
        {q.qid: q for q in questions.values()}
        if set(args.source) & {"teacher"}
        else {q: questions[q] for q, _ in transcripts}
    )

    session = _session(args, budget, out)
    progress = not args.no_progress
    candidates, skipped = _gather(args, session, questions, videos, transcripts, budget, progress)

    kept, dropped = _select(candidates, args.per_question)
    samples = build_samples(kept, args.observation_role)
    if not samples:
        raise DataError(f"no trajectory passed verification ({_counts(dropped) or 'none offered'}); nothing written")
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        write_dataset(samples, stage, budget, args.name, progress)
        check: dict[str, Any] = {"llamafactory": None}
        if not args.no_llamafactory_check:
            samples, check = check_with_llamafactory(samples, stage, args.name, recipe, model, args.drop_long, progress)
            if check["over_cutoff"]:
                dropped["over_cutoff"] += check["over_cutoff"]
                write_text(stage / FILE, jsonl([s.row() for s in samples]))
        if not samples:
            raise DataError("every sample exceeds the cutoff; nothing written")
        summary = _summary(candidates, kept, samples, dropped, skipped, budget, args, check)
        summary["cut_lines_skipped"] = {str(loaded.path): loaded.torn for loaded in torn}
        if session is not None:
            summary["teacher_requests"] = {"sent": session.client.requests_sent, "replayed": session.journal.replayed}
        write_json(stage / SUMMARY, summary)
        _publish(stage, out)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    _print(summary, out)
    return 0


def _session(args: argparse.Namespace, budget: AgentBudget, out: Path) -> TeacherSession | None:
    """The teacher's session over its reply journal, when a source needs the teacher."""
    if not set(args.source) & {"teacher", "reflection"}:
        return None
    cfg = TeacherConfig(
        url=args.teacher_url,
        model=args.teacher_model,
        api_key_env=args.teacher_api_key_env,
        temperature=args.teacher_temperature,
        max_new_tokens=args.teacher_max_new_tokens or budget.max_new_tokens,
        timeout=args.teacher_timeout,
        retries=args.teacher_retries,
        rpm=args.teacher_rpm,
    )
    journal_path = Path(args.journal or out.with_name(out.name + ".journal.jsonl"))
    if args.restart:
        journal_path.unlink(missing_ok=True)
    return TeacherSession(TeacherClient(cfg), ReplyJournal(journal_path), budget)


def _gather(args, session, questions, videos, transcripts, budget, progress) -> tuple[list[Candidate], dict[str, int]]:
    """Every --source's candidate trajectories, in the order given; and the reflection's ineligible counts."""
    from tqdm import tqdm

    candidates: list[Candidate] = []
    skipped: dict[str, int] = {}
    for source in dict.fromkeys(args.source):
        if source == "teacher":
            jobs = len(questions) * args.samples
            with tqdm(total=jobs, desc="teacher", unit="traj", disable=not progress) as bar:
                candidates += teacher_candidates(
                    session,
                    questions.values(),
                    videos,
                    args.samples,
                    args.prompt,
                    args.min_calls,
                    args.teacher_workers,
                    bar.update,
                )
        elif source == "predictions":
            candidates += prediction_candidates(transcripts, questions, budget, args.min_calls)
        else:
            with tqdm(desc="reflection", unit="traj", disable=not progress) as bar:
                found, skipped = reflection_candidates(
                    session, transcripts, questions, args.min_calls, args.teacher_workers, bar.update
                )
            candidates += found
    return candidates, skipped


def _transcripts(args: argparse.Namespace, questions: dict[str, AgentQuestion]):
    """The --predictions transcripts of questions in --data (their videos found), and the files whose cut last
    line was skipped (said at once on stderr, and kept in summary.json)."""
    transcripts, torn = read_transcripts(args.predictions) if args.predictions else ([], [])
    for loaded in torn:
        print(f"zoomzero data export-sft: warning: {loaded.warning()}", file=sys.stderr)
    unknown = sorted({q for q, _ in transcripts} - set(questions))
    if unknown and args.limit is None:
        raise DataError(f"{len(unknown)} prediction qid(s) are not in --data, e.g. {unknown[:3]}")
    return [(q, _with_video(t, questions[q])) for q, t in transcripts if q in questions], torn


def _with_video(transcript, question: AgentQuestion):
    """A transcript whose video path is gone (moved data) reads the dataset row's video instead."""
    if Path(str(transcript.video.get("path", ""))).is_file():
        return transcript
    return replace(transcript, video={**transcript.video, "path": question.video})


def _counts(counter) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


def _summary(candidates, kept, samples, dropped, skipped, budget, args, check) -> dict[str, Any]:
    written = {s.id for s in samples}
    calls = Counter(c.verdict.trajectory.calls for c, s in zip(kept, _ids(kept)) if s in written)
    return {
        "offered": dict(Counter(c.source for c in candidates)),
        "kept": dict(Counter(s.source for s in samples)),
        "samples": len(samples),
        "dropped": dict(sorted(dropped.items())),
        "reflection_not_eligible": skipped,
        "images": sum(len(s.images) for s in samples),
        "calls_per_sample": dict(sorted(calls.items())),
        "budget": budget.to_dict(),
        "observation_role": args.observation_role,
        "check": check,
        "sources": list(dict.fromkeys(args.source)),
        "name": args.name,
        "file": FILE,
    }


def _print(summary: dict[str, Any], out: Path) -> None:
    lines = [f"wrote {summary['samples']} samples ({summary['images']} frames) to {out}/{FILE}"]
    for source, n in summary["offered"].items():
        lines.append(f"  {source:<12} offered {n:>6}   kept {summary['kept'].get(source, 0):>6}")
    if summary["dropped"]:
        lines.append("  dropped: " + _counts(summary["dropped"]))
    if summary["reflection_not_eligible"]:
        lines.append("  reflection not eligible: " + _counts(summary["reflection_not_eligible"]))
    check = summary["check"]
    if check.get("llamafactory"):
        lines.append(
            f"  LLaMA-Factory {check['llamafactory']} ({check['template']}): longest {check['tokens_max']} "
            f"tokens, mean {check['tokens_mean']}, cutoff {check['cutoff_len']}"
        )
    for path, n in summary.get("cut_lines_skipped", {}).items():
        lines.append(f"  skipped: {n} cut line at the end of {path}")
    if "teacher_requests" in summary:
        t = summary["teacher_requests"]
        lines.append(f"  teacher requests: {t['sent']} sent, {t['replayed']} replayed from the journal")
    lines.append(
        f"train: llamafactory-cli train yamls/videozoomer_sft.yaml dataset_dir={out} dataset={summary['name']}"
    )
    print("\n".join(lines))
    print(json.dumps({"summary": str(out / SUMMARY)}))
