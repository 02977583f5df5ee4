"""Convert a benchmark's annotation files into dataset rows (JSONL or parquet) for EasyR1 and the eval tools.

Each row holds a prompt with one <video> placeholder, the video's absolute path, and the ground truth
(option letter, options, spans in seconds, duration, question id). Items that cannot become a valid row
are skipped and counted by reason; the output is written to a temporary name and renamed, so a failed
run never leaves a half file. Videos are looked up under --video-root by default (use --no-video-check
when they are not downloaded yet). Formats and the upstream files each one reads are listed below.

example:
  zoomzero data convert --from nextgqa --input val.csv --gsub gsub_val.json \\
      --video-map map_vid_vidorID.json --video-root /data/NExTVideo --out data/nextgqa_val.jsonl
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from ..errors import DataError, UsageError
from ..files import check_writable, write_json
from ..gvqa.prompts import DEFAULT_PROMPT_STYLE, PROMPT_STYLES
from ..readers import read_json
from ..rows import ROW_SUFFIXES, write_rows
from .formats import FORMATS
from .formats.mcq_table import parse_columns
from .pipeline import Options, convert, video_roots_exist

# the upstream files a format may read (each flag repeatable): the key a Format's `files` uses -> (flag, help)
_FILES = {
    "input": ("--input", "the format's main annotation file (repeat for several, e.g. MLVU task files)"),
    "gsub": ("--gsub", "nextgqa: gsub_{val,test}.json grounding spans"),
    "video_map": ("--video-map", "nextgqa: map_vid_vidorID.json (video_id -> VidOR folder/stem)"),
    "options": ("--options", "rextime: a Hugging Face release file with qid + options"),
}
_FILE_FLAGS = {key: flag for key, (flag, _) in _FILES.items()}


def _formats_epilog() -> str:
    parts = ["formats (--from NAME) and the upstream files they read:"]
    for name, fmt in FORMATS.items():
        parts.append(f"  {name}: {fmt.title}")
        parts.append(
            textwrap.fill(
                fmt.reads, width=100, initial_indent="      ", subsequent_indent="      ", break_on_hyphens=False
            )
        )
    return "\n".join(parts)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _formats_epilog()
    parser.add_argument("--from", dest="format", required=True, choices=sorted(FORMATS), help="upstream format")
    upstream = parser.add_argument_group("the upstream annotations")
    for flag, help in _FILES.values():
        upstream.add_argument(flag, action="append", type=Path, default=[], metavar="FILE", help=help)
    upstream.add_argument(
        "--columns",
        metavar="KEY=COLUMN,...",
        help="mcq-table: which column holds what (video, question, options, answer, qid, start, end, "
        "spans, duration); e.g. video=video_id,question=question,options=options,answer=answer",
    )
    upstream.add_argument(
        "--durations",
        type=Path,
        metavar="FILE",
        help="JSON {video id: seconds} for formats whose annotations lack durations "
        "(videomme, plm-video); otherwise they are probed from the videos",
    )
    _add_video_arguments(parser.add_argument_group("the videos and what rows keep"))
    _add_output_arguments(parser.add_argument_group("the rows written"))


def _add_video_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--video-root",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        required=True,
        help="folder holding the videos (repeat: the first root that has the file wins)",
    )
    group.add_argument(
        "--video-ext",
        default="mp4",
        metavar="EXTS",
        help="extensions tried, in order, for ids without one (default: mp4; e.g. mp4,mkv,webm)",
    )
    group.add_argument(
        "--no-video-check",
        action="store_true",
        help="do not look for the video files (not downloaded yet): paths are written under the "
        "first --video-root and nothing is probed",
    )
    group.add_argument(
        "--min-duration",
        type=float,
        default=0.0,
        metavar="SEC",
        help="skip videos shorter than this (the paper keeps QVHighlights videos > 120 s)",
    )
    group.add_argument(
        "--span-tolerance",
        type=float,
        default=1.0,
        metavar="SEC",
        help="a span may end this far past the video end (or start this far below 0) and is "
        "clamped; further, the row is skipped (default: 1.0)",
    )
    group.add_argument(
        "--ambiguous",
        choices=("first", "skip"),
        default="first",
        help="an answer text equal to several options: keep the first such option, as the "
        "benchmarks' own loaders do (default), or skip the row (cleaner training data)",
    )
    group.add_argument(
        "--workers",
        type=int,
        default=4,
        metavar="N",
        help="videos probed in parallel for durations the annotations lack (default 4)",
    )


def _add_output_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--source", help="value stored as 'source' in each answer (default: the format name)")
    group.add_argument(
        "--prompt",
        choices=PROMPT_STYLES,
        default=DEFAULT_PROMPT_STYLE,
        help="the rows' grounding prompt: paper (Zoom-Zero's words, default) or concise "
        "(this package's shorter wording)",
    )
    group.add_argument("--out", required=True, type=Path, metavar="ROWS", help="output .jsonl or .parquet")
    group.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also write the skip report as JSON (keep it out of a training data folder)",
    )
    group.add_argument("--show", type=int, default=3, metavar="N", help="example ids shown per skip reason")


def _durations(path: Path) -> dict[str, float]:
    """``--durations``: a JSON object {video id: seconds > 0}; anything else is a UsageError naming the entry."""
    import math

    try:
        data = read_json(path)
    except DataError as e:
        raise UsageError(f"--durations: {e}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--durations {path}: a JSON {type(data).__name__}, expected an object {{video id: seconds}}")
    out = {}
    for key, value in data.items():
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            seconds = float("nan")
        if isinstance(value, bool) or not (math.isfinite(seconds) and seconds > 0):
            raise UsageError(f"--durations {path}: entry {key!r} is {value!r:.40}, expected seconds > 0")
        out[str(key)] = seconds
    return out


def check_arguments(args: argparse.Namespace) -> dict[str, str]:
    """Every argument mistake, found before any file is read: raises UsageError naming the argument.

    Returns the parsed ``--columns`` (mcq-table), else {}.
    """
    fmt_cls = FORMATS[args.format]
    columns = {}
    if getattr(fmt_cls, "needs_columns", False):
        if not args.columns:
            raise UsageError(
                f"--from {args.format} needs --columns (see --help: which column holds the video, "
                "question, options and answer)"
            )
        try:
            columns = parse_columns(args.columns)
        except ValueError as e:
            raise UsageError(f"--columns: {e}") from None
    elif args.columns:
        raise UsageError(f"--from {args.format} does not read --columns (only mcq-table does)")
    inputs = {key: list(getattr(args, key)) for key in _FILE_FLAGS}
    missing = [_FILE_FLAGS[k] for k in fmt_cls.required if not inputs[k]]
    if missing:
        needs = "; ".join(f"{_FILE_FLAGS[k]} ({fmt_cls.files[k]})" for k in fmt_cls.required)
        raise UsageError(f"--from {args.format} needs {needs}; missing {', '.join(missing)}")
    unused = [_FILE_FLAGS[k] for k, v in inputs.items() if v and k not in fmt_cls.files]
    if unused:
        raise UsageError(f"--from {args.format} does not read {', '.join(unused)}")
    given = [(flag, p) for key, flag in _FILE_FLAGS.items() for p in inputs[key]]
    if args.durations is not None:
        given.append(("--durations", args.durations))
    absent = [f"{flag} {p}" for flag, p in given if not p.is_file()]
    if absent:
        raise UsageError(f"no such file: {', '.join(absent)}")
    if args.out.suffix not in ROW_SUFFIXES:
        raise UsageError(f"--out must end in {', '.join(ROW_SUFFIXES)}, got {args.out}")
    outputs = [("--out", args.out)] + ([("--report", args.report)] if args.report is not None else [])
    for flag, path in outputs:
        check_writable(path, flag)
        clash = next((f"{f} {p}" for f, p in given if p.resolve() == path.resolve()), None)
        if clash:
            raise UsageError(f"{flag} {path} is also {clash}: it would be overwritten; write elsewhere")
    if args.report is not None and args.report.resolve() == args.out.resolve():
        raise UsageError("--report and --out are the same file")
    if not args.no_video_check and video_roots_exist(args.video_root):
        raise UsageError(
            f"--video-root is not a folder: {', '.join(map(str, video_roots_exist(args.video_root)))} "
            "(use --no-video-check if the videos are not downloaded yet)"
        )
    if not [e for e in args.video_ext.split(",") if e.strip()]:
        raise UsageError(f"--video-ext {args.video_ext!r} names no extension (e.g. mp4 or mp4,mkv)")
    for flag, value, low in (
        ("--span-tolerance", args.span_tolerance, 0),
        ("--min-duration", args.min_duration, 0),
        ("--show", args.show, 0),
        ("--workers", args.workers, 1),
    ):
        if not value >= low:  # also catches nan
            raise UsageError(f"{flag} must be >= {low}, got {value}")
    return columns


def run(args: argparse.Namespace) -> int:
    columns = check_arguments(args)
    durations = _durations(args.durations) if args.durations is not None else {}
    options = Options(
        video_roots=tuple(args.video_root),
        video_exts=tuple(e.strip() for e in args.video_ext.split(",") if e.strip()),
        check_videos=not args.no_video_check,
        durations=durations,
        min_duration=args.min_duration,
        span_tolerance=args.span_tolerance,
        source=args.source,
        ambiguous=args.ambiguous,
        prompt_style=args.prompt,
    )
    inputs = {key: list(getattr(args, key)) for key in _FILE_FLAGS}
    fmt = FORMATS[args.format](inputs, columns=columns) if columns else FORMATS[args.format](inputs)
    try:
        rows, report = convert(fmt, options, examples=args.show, workers=args.workers)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        if isinstance(e, DataError):
            raise
        # a shape no check above foresaw: still the input's fault, named as such
        raise DataError(f"cannot read the {args.format} input: {type(e).__name__}: {e}") from e
    print(report.table(), file=sys.stderr)
    if args.report is not None:
        write_json(args.report, report.to_dict())
    if not rows:
        raise DataError(f"no rows converted (see the reasons above); nothing written to {args.out}")
    write_rows(args.out, rows)
    print(f"wrote {len(rows)} rows to {args.out}", file=sys.stderr)
    return 0
