"""MLVU dev (MLVU/MVLU): per-task JSON files of long-video MCQ without spans."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .base import Draft, Format, letter_of_text, need, numbered_records, option_list, register, seconds


@register
class MLVU(Format):
    name = "mlvu"
    title = "MLVU dev multiple-choice tasks (MCQ, no spans)"
    reads = (
        "--input MLVU/json/<n>_<task>.json (repeat for each task file; the open-ended 8_sub_scene and "
        "9_summary have no candidates and are skipped): a list of {video, duration, question, candidates, "
        "answer (text), question_type}. Video: the first existing of VIDEO_ROOT/<n>_<task>/<video>, "
        "VIDEO_ROOT/<task>/<video>, VIDEO_ROOT/<question_type>/<video>, VIDEO_ROOT/<video>. qid: "
        "'<file stem>_<index>' (MLVU has no ids)."
    )
    files = {"input": "MLVU/json/*.json task files"}
    required_columns = ("video", "question", "answer")

    def items(self) -> list[tuple[str, int, dict[str, Any]]]:
        return numbered_records(self, self.inputs["input"])

    def qid(self, item: tuple[str, int, dict[str, Any]]) -> str:
        return f"{item[0]}_{item[1]}"

    def draft(self, item: tuple[str, int, dict[str, Any]]) -> Draft:
        stem, index, row = item
        video, question, answer = need(row, "video", "question", "answer")
        options = option_list(row.get("candidates"))
        task = re.sub(r"^\d+_", "", stem)
        folders = dict.fromkeys([stem, task, str(row.get("question_type") or task), ""])
        letter, matches = letter_of_text(answer, options)
        return Draft(
            qid=self.qid(item),
            question=str(question),
            options=options,
            answer=letter,
            answer_matches=matches,
            videos=tuple(str(Path(f) / str(video)) for f in folders),
            duration=None if row.get("duration") is None else seconds(row["duration"], "duration"),
            video_id=Path(str(video)).stem,
            extra={"task": task, "question_type": row.get("question_type"), "video_file": str(video)},
        )
