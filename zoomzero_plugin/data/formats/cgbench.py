"""CG-Bench (CG-Bench/CG-Bench): long-video MCQ with clue intervals."""

from __future__ import annotations

from typing import Any

from .base import Draft, Format, first, letter, need, option_list, register, seconds, span_list


@register
class CGBench(Format):
    name = "cgbench"
    title = "CG-Bench full / mini (long-video MCQ with clue intervals)"
    reads = (
        "--input cgbench.json or cgbench_mini.json: a list of {qid, video_uid, question, answer (text), "
        "choices, right_answer (letter), clue_intervals [[s, e], ...], domain, sub_category, duration}. "
        "Video: VIDEO_ROOT/<video_uid>.mp4 (the release's cg_videos_720p/). qid: str(qid). The answer letter "
        "is right_answer."
    )
    files = {"input": "cgbench.json or cgbench_mini.json"}
    required_columns = ("qid", "video_uid", "question", "choices", "right_answer", "duration", "clue_intervals")

    def qid(self, item: dict[str, Any]) -> str | None:
        return None if first(item, "qid") is None else str(item["qid"])

    def draft(self, item: dict[str, Any]) -> Draft:
        qid, uid, question, choices, right = need(item, "qid", "video_uid", "question", "choices", "right_answer")
        options = option_list(choices)
        return Draft(
            qid=str(qid),
            question=str(question),
            options=options,
            answer=letter(right, options),
            videos=(str(uid),),
            duration=seconds(need(item, "duration"), "duration"),
            spans=span_list(item.get("clue_intervals")),
            video_id=str(uid),
            extra={"video_uid": str(uid), "domain": item.get("domain"), "sub_category": item.get("sub_category")},
        )
