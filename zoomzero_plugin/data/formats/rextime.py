"""ReXTime (ReXTime/ReXTime): repository ground truth, options from the Hugging Face release."""

from __future__ import annotations

from typing import Any

from ...errors import DataError
from ...readers import read_table
from ...rows import LABEL_HIDDEN_KEY
from .base import Draft, Format, Skip, first, letter, need, option_list, register, seconds, span_list


@register
class ReXTime(Format):
    name = "rextime"
    title = "ReXTime val/test (grounded QA over ActivityNet and QVHighlights videos)"
    reads = (
        "--input rextime_{val,test}.jsonl from the GitHub repo (qid, query, duration, vid, relevant_windows, "
        "ans) or the Hugging Face release rextime_{train,val,test}.json (qid, vid, question, options, ans, "
        "span, duration, category, source); --options a release file whose rows carry qid + options, for "
        "inputs without options (the repo's jsonl has none). Video: VIDEO_ROOT/<vid>.mp4 (ActivityNet ids "
        "start with 'v_'; give one --video-root per source). qid: the release's qid. Rows without 'ans' "
        "(hidden test labels) are skipped as no_answer."
    )
    keep_hidden = False  # rows without 'ans' are skipped (rextime-test keeps them, label hidden)
    files = {
        "input": "rextime_{val,test}.jsonl (repo) or rextime_{val,test}.json (HF release)",
        "options": "HF release rextime_{val,test}.json, read for qid -> options",
    }

    required_columns = ("qid", "vid", "duration", ("question", "query"))

    def items(self) -> list[dict[str, Any]]:
        self.options: dict[str, Any] = {}
        for path in self.inputs.get("options", []):
            found = {
                str(row["qid"]): row["options"]
                for row in read_table(path)[1]
                if row.get("qid") is not None and row.get("options") is not None
            }
            if not found:
                raise DataError(
                    f"--options {path}: no row has both 'qid' and 'options' (expected the Hugging Face "
                    "release's rextime_{val,test}.json)"
                )
            self.options.update(found)
        return super().items()

    def qid(self, item: dict[str, Any]) -> str | None:
        return None if first(item, "qid") is None else str(item["qid"])

    def draft(self, item: dict[str, Any]) -> Draft:
        qid, vid = (str(v) for v in need(item, "qid", "vid"))
        question = first(item, "question", "query")
        if question is None:
            raise Skip("unknown_format", "neither 'question' nor 'query'")
        raw_options = item.get("options")
        if raw_options is None:
            raw_options = self.options.get(qid)
            if raw_options is None:
                hint = "qid not in --options" if self.options else "the repo's jsonl has no options: pass --options"
                raise Skip("no_options", hint)
        options = option_list(raw_options)
        hidden = item.get("ans") in (None, "")
        if hidden and not self.keep_hidden:
            raise Skip("no_answer", "no 'ans' (hidden test label; --from rextime-test keeps such rows)")
        spans = span_list(first(item, "relevant_windows", "span", default=[]))
        extra = {"vid": vid, "category": item.get("category"), "subset": item.get("source")}
        if hidden:
            extra[LABEL_HIDDEN_KEY] = True
        return Draft(
            qid=qid,
            question=str(question),
            options=options,
            answer="A" if hidden else letter(item["ans"], options),  # a placeholder when the label is hidden
            videos=(vid,),
            duration=seconds(need(item, "duration"), "duration"),
            spans=spans,
            video_id=vid,
            extra=extra,
        )


@register
class ReXTimeTest(ReXTime):
    name = "rextime-test"
    title = "ReXTime test with its hidden labels: rows for `zoomzero eval`, then `zoomzero score --export rextime`"
    reads = ReXTime.reads.replace(
        "Rows without 'ans' (hidden test labels) are skipped as no_answer.",
        (
            "Rows without 'ans' (the test split's labels are hidden) are kept with label_hidden: their answer is a "
            "placeholder, so they can be evaluated and exported for the server, never scored or trained on."
        ),
    )
    keep_hidden = True
