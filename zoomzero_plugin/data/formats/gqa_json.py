"""The grounded-QA JSON of the Zoom-Zero and VideoChat-R1 releases (ActivityNet, QVHighlights, NExT-GQA…)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .base import (
    Draft,
    Format,
    Skip,
    first,
    letter,
    letter_of_text,
    need,
    numbered_records,
    register,
    seconds,
    span_list,
    strip_labels,
)


@register
class GQAJson(Format):
    name = "gqa-json"
    title = "grounded-QA JSON of the Zoom-Zero / VideoChat-R1 releases (stage I ActivityNet, QVHighlights)"
    reads = (
        "--input FILE.json: a list of {video, question, options ['(A) ...', ...], answer '(C)', "
        "glue [[s, e], ...], duration (optional), qid/id/question_id (optional)}, as read by "
        "xiaoqian-shen/Zoom-Zero verl/utils/dataset_video.py and VideoChat-R1's evaluate_gqa.py. Video: "
        "VIDEO_ROOT/<video> ('.mp4' appended when it has no suffix). qid: the item's id, else "
        "'<file stem>_<index>'. Labels '(A) ' are stripped from the options."
    )
    files = {"input": "the release's annotation JSON (e.g. GVideoQA-anet.json)"}
    required_columns = ("video", "question", "options", "answer")

    def items(self) -> list[tuple[str, int, dict[str, Any]]]:
        return numbered_records(self, self.inputs["input"])

    def qid(self, item: tuple[str, int, dict[str, Any]]) -> str:
        stem, index, row = item
        return str(first(row, "qid", "id", "question_id", default=f"{stem}_{index}"))

    def draft(self, item: tuple[str, int, dict[str, Any]]) -> Draft:
        stem, index, row = item
        video, question, raw_options, answer = need(row, "video", "question", "options", "answer")
        if not isinstance(raw_options, list) or len(raw_options) < 2:
            raise Skip("no_options", f"options {raw_options!r}")
        options = strip_labels(raw_options)
        if re.fullmatch(r"\s*\(?[A-Za-z]\)?\s*", str(answer)):
            letter_, matches = letter(answer, options), ()
        else:
            letter_, matches = letter_of_text(answer, options)
        duration = first(row, "duration", "video_duration")
        return Draft(
            qid=self.qid(item),
            question=str(question),
            options=options,
            answer=letter_,
            answer_matches=matches,
            videos=(str(video),),
            duration=None if duration is None else seconds(duration, "duration"),
            spans=span_list(first(row, "glue", "spans", default=[])),
            video_id=Path(str(video)).stem,
            extra={"dataset": stem},
        )
