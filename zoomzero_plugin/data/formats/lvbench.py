"""LVBench (zai-org/LVBench, formerly THUDM/LVBench): hour-long video MCQ without spans."""

from __future__ import annotations

import re
from typing import Any

from .base import Draft, Format, Skip, first, letter, need, register, seconds

_OPTION = re.compile(r"^\s*\(([A-Z])\)\s*(.*?)\s*$")


def split_question(text: str) -> tuple[str, list[str]]:
    """``"Why …?\\n(A) x\\n(B) y"`` → ``("Why …?", ["x", "y"])``; Skip when the options are not (A), (B)… lines."""
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    starts = [i for i, ln in enumerate(lines) if _OPTION.match(ln)]
    if not starts:
        raise Skip("no_options", "no '(A) …' option lines in the question")
    question = " ".join(ln.strip() for ln in lines[: starts[0]])
    options = []
    for ln in lines[starts[0] :]:
        m = _OPTION.match(ln)
        if m and m.group(1) == chr(ord("A") + len(options)):
            options.append(m.group(2))
        elif options:  # a wrapped option line
            options[-1] = f"{options[-1]} {ln.strip()}"
    if not question or len(options) < 2:
        raise Skip("unknown_format", f"question {text[:60]!r} has {len(options)} option(s)")
    return question, options


@register
class LVBench(Format):
    name = "lvbench"
    title = "LVBench (hour-long video MCQ, no spans)"
    reads = (
        "--input video_info.meta.jsonl: one line per video {key, type, video_info {duration_minutes, fps, "
        "...}, qa: [{uid, question (with '(A) ...' option lines), answer (letter), question_type, "
        "time_reference}]}; the flat parquet export (one row per question with 'key') is read too. Video: "
        "VIDEO_ROOT/<key>.mp4 (the release's all_videos/). qid: str(uid). Duration: probed from the video "
        "when it is there (video_info's minutes are coarse), else --durations, else duration_minutes * 60."
    )
    files = {"input": "video_info.meta.jsonl (or the parquet export)"}
    required_columns = ("key", ("qa", "question"))

    def items(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        out = []
        for path in self.inputs["input"]:
            for record in self.records(path):
                qas = record.get("qa")
                if isinstance(qas, list):
                    out.extend((record, qa) for qa in qas)
                else:
                    out.append((record, record))
        return out

    def qid(self, item: tuple[dict[str, Any], dict[str, Any]]) -> str | None:
        uid = first(item[1], "uid")
        return None if uid is None else str(uid)

    def draft(self, item: tuple[dict[str, Any], dict[str, Any]]) -> Draft:
        video, qa = item
        key = need(video, "key")
        uid, text, answer = need(qa, "uid", "question", "answer")
        question, options = split_question(str(text))
        info = video.get("video_info") or {}
        minutes = first(info, "duration_minutes", "duration_min")
        duration = seconds(minutes, "duration_minutes") * 60 if minutes is not None else None
        if duration is None and first(info, "duration") is not None:
            duration = seconds(info["duration"], "duration")
        return Draft(
            qid=str(uid),
            question=question,
            options=options,
            answer=letter(answer, options),
            videos=(str(key),),
            duration=duration,
            video_id=str(key),
            approx_duration=True,
            extra={
                "key": str(key),
                "video_type": video.get("type"),
                "question_type": qa.get("question_type"),
                "time_reference": qa.get("time_reference"),
            },
        )
