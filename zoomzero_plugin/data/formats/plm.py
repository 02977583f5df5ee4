"""PLM-Video fine-grained QA (facebook/PLM-VideoBench, facebook/PLM-Video-Human): MCQ rows with a clue span."""

from __future__ import annotations

from typing import Any

from .base import Draft, Format, Skip, first, letter, letter_of_text, need, option_list, register, seconds


@register
class PLMVideo(Format):
    name = "plm-video"
    title = "PLM-Video fine-grained QA with options (stage II source); the clue span is the QA's segment"
    reads = (
        "--input an fgqa parquet/jsonl (e.g. PLM-VideoBench fgqa/plm_fgqa_test.parquet): qa_uid/uid/qa_id, "
        "question, answer, options {option_0, option_1, ...} (or a list), answer_index/answer_idx, metadata "
        "{source_video_id, source_dataset, source_start_time, source_end_time, question_type/q_type}. "
        "The question is asked about the whole source video and [source_start_time, source_end_time] is "
        "its ground-truth span. Video: VIDEO_ROOT/<source_video_id>.mp4. Duration: --durations, else "
        "probed. Rows without options (PLM-Video-Human's open-ended fgqa train split) are skipped as "
        "no_options."
    )
    files = {"input": "fgqa parquet or jsonl with options"}
    required_columns = (("qa_uid", "uid", "qa_id"), "question", "metadata")

    def qid(self, item: dict[str, Any]) -> str | None:
        qid = first(item, "qa_uid", "uid", "qa_id")
        return None if qid is None else str(qid)

    def draft(self, item: dict[str, Any]) -> Draft:
        qid = self.qid(item)
        if qid is None:
            raise Skip("unknown_format", "no qa_uid / uid / qa_id")
        question = need(item, "question")
        if item.get("options") is None:
            raise Skip("no_options", "open-ended row")
        options = option_list(item["options"])
        index, matches = first(item, "answer_index", "answer_idx"), ()
        if index is not None:
            if not str(index).lstrip("-").isdigit():
                raise Skip("unknown_format", f"answer index {index!r}")
            answer = letter(int(index), options)
        elif item.get("answer") is not None:
            answer, matches = letter_of_text(item["answer"], options)
        else:
            raise Skip("no_answer", "no answer_index and no answer")
        meta = item.get("metadata") or {}
        video_id, start, end = need(meta, "source_video_id", "source_start_time", "source_end_time")
        return Draft(
            qid=qid,
            question=str(question),
            options=options,
            answer=answer,
            answer_matches=matches,
            videos=(str(video_id),),
            spans=[(seconds(start, "source_start_time"), seconds(end, "source_end_time"))],
            video_id=str(video_id),
            extra={
                "source_video_id": str(video_id),
                "source_dataset": meta.get("source_dataset"),
                "question_type": first(meta, "question_type", "q_type"),
                "segment": item.get("video"),
            },
        )
