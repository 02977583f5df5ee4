"""Check dataset rows: videos exist and decode, durations agree, spans and answers are valid.

For every row: the prompt holds exactly one <video>; the answer column is a ground truth whose letter is
one of its options and whose spans lie inside the video; question ids are unique; the video file exists,
opens, and its first and last frames decode; the decoded duration matches the row's within the
tolerance. Prints a summary table and the first offending rows by question id; exits 1 when any row
fails. A corrupt or truncated file is one row's error, never a crash. Each video is probed once, however
many rows share it.

example:
  zoomzero data check data/nextgqa_val.jsonl data/stage1/ --duration-tolerance 2%
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import write_json
from ..ground_truth import LETTERS, GroundTruth
from ..question import VIDEO_PLACEHOLDER
from ..rows import ANSWER_KEY, PROMPT_KEY, VIDEO_KEY, read_rows
from ..spans import check_span
from ..video import probe_duration

CHECKS: dict[str, str] = {
    "bad_row": "the row lacks the prompt/videos/answer columns, or they have the wrong type",
    "video_placeholders": "the prompt does not hold exactly one <video>",
    "bad_answer": "the answer column is not a usable ground truth (JSON object with letter, options, duration, qid)",
    "answer_not_in_options": "the answer letter is not one of the options",
    "invalid_span": "a span is not a (start, end) pair of finite seconds with 0 <= start <= end",
    "span_past_end": "a span starts at or after the video's end, or ends past it by more than the tolerance",
    "duplicate_qid": "another row has the same question id",
    "missing_video": "the video file does not exist",
    "undecodable_video": "the decoder cannot open the file or decode its first and last frames",
    "duration_mismatch": "the decoded duration differs from the row's duration by more than the tolerance",
}


@dataclass(frozen=True)
class Problem:
    check: str
    detail: str


@dataclass
class RowInfo:
    """One row as the checks see it. ``video``/``duration`` are None when the row does not say."""

    qid: str
    problems: list[Problem]
    video: str | None = None
    duration: float | None = None
    spans: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class Probe:
    """What the decoder says about one file: its duration, or why it could not be read."""

    duration: float | None = None
    missing: bool = False
    error: str | None = None


def tolerance(spec: str) -> Callable[[float], float]:
    """``"1.5"`` → 1.5 s whatever the length; ``"2%"`` → 2 % of the duration."""
    text = spec.strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"tolerance {spec!r} is neither seconds (1.5) nor a percentage (2%)") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"tolerance {spec!r} must be >= 0")
    return (lambda d: d * value) if text.endswith("%") else (lambda d: value)


def probe_video(path: str) -> Probe:
    """Open ``path`` with decord and decode its first and last frames. Never raises."""
    if not os.path.isfile(path):
        return Probe(missing=True)
    try:
        import decord

        decord.logging.set_level(decord.logging.QUIET)
        duration = probe_duration(path)
        reader = decord.VideoReader(path, num_threads=1)
        if len(reader) == 0:
            return Probe(error="no frames")
        reader.get_batch([0, len(reader) - 1])
        return Probe(duration=duration)
    except Exception as e:  # noqa: BLE001  (whatever the decoder throws is this file's fault)
        message = str(e).strip().splitlines()
        return Probe(error=f"{type(e).__name__}: {message[-1][:160] if message else ''}".strip(": "))


def _truth(value: Any) -> dict[str, Any] | None:
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError:  # not JSON, or bytes that are not UTF-8
            return None
    return value if isinstance(value, dict) else None


def check_row(row: Any, keys: tuple[str, str, str], tol: Callable[[float], float], where: str) -> RowInfo:
    """Everything checkable without opening the video. ``where`` names the row when it has no qid."""
    prompt_key, video_key, answer_key = keys
    if not isinstance(row, dict) or any(k not in row for k in keys):
        found = sorted(row) if isinstance(row, dict) else type(row).__name__
        return RowInfo(where, [Problem("bad_row", f"columns {found}, need {list(keys)}")])
    truth = _truth(row[answer_key])
    info = RowInfo(str(truth["qid"]) if truth and truth.get("qid") is not None else where, [])
    videos = row[video_key]
    if isinstance(videos, (list, tuple)) and len(videos) == 1 and isinstance(videos[0], str):
        info.video = videos[0]
    else:
        info.problems.append(Problem("bad_row", f"{video_key} must be a list of one path, got {videos!r:.80}"))
    prompt = row[prompt_key]
    n = prompt.count(VIDEO_PLACEHOLDER) if isinstance(prompt, str) else -1
    if n != 1:
        info.problems.append(
            Problem("video_placeholders", f"{n} {VIDEO_PLACEHOLDER} in the prompt" if n >= 0 else "prompt is not text")
        )
    if truth is None or any(truth.get(k) is None for k in ("answer", "options", "duration", "qid")):
        info.problems.append(Problem("bad_answer", f"{str(row[answer_key])[:80]!r}"))
        return info
    options = truth["options"] if isinstance(truth["options"], list) else []
    letter = str(truth["answer"]).strip().strip("()").upper()
    if len(letter) != 1 or letter not in LETTERS[: len(options)]:
        info.problems.append(
            Problem("answer_not_in_options", f"answer {truth['answer']!r} with {len(options)} options")
        )
    try:
        duration = float(truth["duration"])
    except (TypeError, ValueError):
        duration = float("nan")
    if not (math.isfinite(duration) and duration > 0):
        info.problems.append(Problem("bad_answer", f"duration {truth['duration']!r}"))
        return info
    info.duration, spans = duration, []
    for item in truth.get("spans") or []:
        try:
            start, end = item
        except (TypeError, ValueError):
            info.problems.append(Problem("invalid_span", f"{item!r}"))
            continue
        reason = check_span(start, end)
        if reason is not None:
            info.problems.append(Problem("invalid_span", f"({start}, {end}): {reason}"))
            continue
        spans.append((float(start), float(end)))
        if float(start) >= duration or float(end) > duration + tol(duration):
            info.problems.append(Problem("span_past_end", f"({start}, {end}) in the row's {duration:g} s"))
    info.spans = tuple(spans)
    if not info.problems:
        try:
            GroundTruth.parse(truth)
        except ValueError as e:
            info.problems.append(Problem("bad_answer", str(e)))
    return info


def check_video(info: RowInfo, probe: Probe, tol: Callable[[float], float]) -> list[Problem]:
    """Problems between a row and what the decoder found in its video."""
    if probe.missing:
        return [Problem("missing_video", str(info.video))]
    if probe.error is not None:
        return [Problem("undecodable_video", f"{info.video}: {probe.error}")]
    problems, real = [], probe.duration
    if info.duration is not None and abs(real - info.duration) > tol(info.duration):
        problems.append(
            Problem("duration_mismatch", f"decoded {real:.2f} s, row says {info.duration:g} s ({info.video})")
        )
    flagged = any(p.check == "span_past_end" for p in info.problems)
    past = [(s, e) for s, e in info.spans if s >= real or e > real + tol(real)]
    if past and not flagged:
        problems.append(Problem("span_past_end", f"{past[0]} past the decoded {real:.2f} s"))
    return problems


def _row_files(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """Row files under ``paths`` (folders as EasyR1 reads them) and why a folder would not load in EasyR1."""
    files, problems = [], []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        found = sorted(p for p in path.iterdir() if not p.name.startswith("."))
        suffixes = {p.suffix for p in found}
        if len(suffixes) > 1 or suffixes - {".jsonl", ".parquet"}:
            problems.append(
                f"{path}: EasyR1 loads a folder as files of one type (.jsonl or .parquet) and nothing "
                f"else; it holds {', '.join(sorted(p.name for p in found))}"
            )
        files += [p for p in found if p.suffix in (".jsonl", ".parquet")]
    return files, problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "checks:\n" + "\n".join(f"  {k:<22} {v}" for k, v in CHECKS.items())
    parser.add_argument(
        "rows",
        nargs="+",
        type=Path,
        metavar="ROWS",
        help="row files (.jsonl/.parquet) or folders of them (as EasyR1's data.train_files)",
    )
    parser.add_argument(
        "--duration-tolerance",
        type=tolerance,
        default=tolerance("1.0"),
        metavar="TOL",
        help="allowed gap between decoded and row durations, and for span ends past the end: "
        "seconds (1.0, the default) or a percentage of the duration (2%%)",
    )
    parser.add_argument("--skip-videos", action="store_true", help="check the rows only; do not open the video files")
    parser.add_argument("--workers", type=int, default=4, metavar="N", help="videos probed in parallel (default 4)")
    parser.add_argument("--show", type=int, default=10, metavar="N", help="offending rows listed (default 10)")
    parser.add_argument("--report", type=Path, metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--prompt-key", default=PROMPT_KEY)
    parser.add_argument("--video-key", default=VIDEO_KEY)
    parser.add_argument("--answer-key", default=ANSWER_KEY)


def run(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from tqdm import tqdm

    files, folder_problems = _row_files(args.rows)
    absent = [str(p) for p in files if not p.is_file()]
    if absent or not files:
        raise UsageError(f"no row files at {', '.join(absent or map(str, args.rows))}")
    for problem in folder_problems:
        print(f"zoomzero data check: error: {problem}", file=sys.stderr)
    tol = args.duration_tolerance
    keys = (args.prompt_key, args.video_key, args.answer_key)
    infos: list[RowInfo] = []
    first_seen: dict[str, str] = {}
    for path in files:
        rows = read_rows(path)  # a DataError names file:line
        for index, row in enumerate(rows):
            where = f"{path.name}:{index + 1}"
            info = check_row(row, keys, tol, where)
            if info.qid in first_seen:
                info.problems.append(Problem("duplicate_qid", f"also at {first_seen[info.qid]}"))
            first_seen.setdefault(info.qid, where)
            infos.append(info)

    probes: dict[str, Probe] = {}
    if not args.skip_videos:
        paths = sorted({i.video for i in infos if i.video is not None})
        with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
            for path, probe in tqdm(
                zip(paths, pool.map(probe_video, paths), strict=True),
                total=len(paths),
                desc="probe videos",
                unit="video",
                disable=None,
            ):
                probes[path] = probe
        for info in infos:
            if info.video in probes:
                info.problems.extend(check_video(info, probes[info.video], tol))

    counts = Counter(check for i in infos for check in {p.check for p in i.problems})
    bad = [i for i in infos if i.problems]
    print(
        f"checked {len(infos)} rows in {len(files)} file(s), {len(probes)} video(s) probed"
        f"{' (videos skipped: --skip-videos)' if args.skip_videos else ''}: "
        f"{len(infos) - len(bad)} ok, {len(bad)} with errors"
    )
    for check, meaning in CHECKS.items():
        if counts[check]:
            print(f"  {check:<22} {counts[check]:>7}  {meaning}")
    if bad:
        print(f"first {min(args.show, len(bad))} offending rows:")
        for info in bad[: args.show]:
            print(f"  {info.qid}: " + "; ".join(f"{p.check}: {p.detail}" for p in info.problems))
    if args.report is not None:
        write_json(
            args.report,
            {
                "rows": len(infos),
                "ok": len(infos) - len(bad),
                "errors": dict(counts.most_common()),
                "offending": [{"qid": i.qid, "problems": [[p.check, p.detail] for p in i.problems]} for i in bad],
            },
        )
    return 1 if bad or folder_problems else 0
