"""LongVideoBench (longvideobench/LongVideoBench): long-video MCQ (up to an hour) without spans."""

from __future__ import annotations

from typing import Any

from ...ground_truth import LETTERS
from .base import Draft, Format, Skip, first, need, option_list, register, seconds

NO_OPTION = "N/A"  # the Hugging Face export pads option0..option4 with it


def candidates(item: dict[str, Any]) -> list[str]:
    """The options: ``candidates`` (the JSON release), or ``option0``..``option4`` without "N/A" (the parquet)."""
    if item.get("candidates") is not None:
        return option_list(item["candidates"])
    keyed = [item.get(f"option{i}") for i in range(len(LETTERS))]
    return option_list([o for o in keyed if o is not None and str(o).strip() != NO_OPTION])


@register
class LongVideoBench(Format):
    name = "longvideobench"
    title = "LongVideoBench (long-video MCQ, no spans)"
    reads = (
        "--input lvb_val.json (a list of {id, video_id, video_path, subtitle_path, question, candidates, "
        "correct_choice (index), duration (s), duration_group (15 | 60 | 600 | 3600), question_category, "
        "topic_category, level, ...}); the parquet export with option0..option4 ('N/A' when absent) is read too; "
        "lvb_test_wo_gt.json has no correct_choice (hidden labels: every row skipped as no_answer). Video: "
        "VIDEO_ROOT/videos/<video_path> or VIDEO_ROOT/<video_path>. qid: id. Subtitles are not used."
    )
    files = {"input": "lvb_val.json (or the parquet export)"}
    required_columns = ("id", "question", "video_path", ("candidates", "option0"))

    def qid(self, item: dict[str, Any]) -> str | None:
        value = first(item, "id")
        return None if value is None else str(value)

    def draft(self, item: dict[str, Any]) -> Draft:
        qid, question, video = need(item, "id", "question", "video_path")
        options = candidates(item)
        choice = item.get("correct_choice")
        if choice is None:
            raise Skip("no_answer", "no correct_choice (the test split's labels are hidden)")
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(options):
            raise Skip("answer_not_in_options", f"correct_choice {choice!r} with {len(options)} options")
        duration = item.get("duration")
        return Draft(
            qid=str(qid),
            question=str(question),
            options=options,
            answer=LETTERS[choice],
            videos=(f"videos/{video}", str(video)),
            duration=None if duration is None else seconds(duration, "duration"),
            video_id=str(item.get("video_id") or video),
            extra={
                "video_id": item.get("video_id"),
                "duration_group": item.get("duration_group"),
                "question_category": item.get("question_category"),
                "topic_category": item.get("topic_category"),
                "level": item.get("level"),
            },
        )
