"""Video-MME (lmms-lab/Video-MME): long-video MCQ without spans."""

from __future__ import annotations

from typing import Any

from .base import Draft, Format, first, letter, need, option_list, register, strip_labels


@register
class VideoMME(Format):
    name = "videomme"
    title = "Video-MME (MCQ, no spans)"
    reads = (
        "--input videomme/test-00000-of-00001.parquet: video_id, duration ('short'/'medium'/'long'), domain, "
        "sub_category, url, videoID, question_id, task_type, question, options ['A. ...', ...], answer "
        "(letter). Video: VIDEO_ROOT/<videoID>.mp4 (the release's data/). qid: question_id. Duration in "
        "seconds: --durations (keyed by videoID), else probed from the video."
    )
    files = {"input": "videomme/test-00000-of-00001.parquet"}
    required_columns = ("question_id", "videoID", "question", "options", "answer")

    def qid(self, item: dict[str, Any]) -> str | None:
        return None if first(item, "question_id") is None else str(item["question_id"])

    def draft(self, item: dict[str, Any]) -> Draft:
        qid, video, question, raw_options, answer = need(
            item, "question_id", "videoID", "question", "options", "answer"
        )
        options = strip_labels(option_list(raw_options))
        return Draft(
            qid=str(qid),
            question=str(question),
            options=options,
            answer=letter(answer, options),
            videos=(str(video),),
            video_id=str(video),
            extra={
                "videoID": str(video),
                "duration_category": item.get("duration"),  # the key the Video-MME metric table reads
                "domain": item.get("domain"),
                "sub_category": item.get("sub_category"),
                "task_type": item.get("task_type"),
            },
        )
