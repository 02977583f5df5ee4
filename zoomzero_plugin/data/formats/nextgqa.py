"""NExT-GQA (doc-doc/NExT-GQA): question CSV + grounding JSON + video-id map."""

from __future__ import annotations

from typing import Any

from .base import Draft, Format, Skip, first, json_object, letter_of_text, need, register, seconds


@register
class NextGQA(Format):
    name = "nextgqa"
    title = "NExT-GQA val/test (grounded QA, several spans per question possible)"
    reads = (
        "--input {val,test}.csv: video_id, frame_count, question, answer (option text), qid, type, a0..a4; "
        "--gsub gsub_{val,test}.json: {video_id: {duration, fps, location: {qid: [[s, e], ...]}}}; "
        "--video-map map_vid_vidorID.json: {video_id: 'folder/stem'}. "
        "Video: VIDEO_ROOT/<folder>/<stem>.mp4 (VidOR layout). qid: '<video_id>_<qid>' (the official "
        "evaluator's key). Duration: frame_count / fps."
    )
    files = {
        "input": "{val,test}.csv from datasets/nextgqa/",
        "gsub": "gsub_{val,test}.json (grounding spans)",
        "video_map": "map_vid_vidorID.json (video_id -> VidOR folder/stem)",
    }
    required = ("input", "gsub", "video_map")
    required_columns = ("video_id", "qid", "question", "answer", "a0", "a1", "a2", "a3", "a4")

    def items(self) -> list[dict[str, Any]]:
        self.gsub = {}
        for path in self.inputs["gsub"]:
            self.gsub.update(
                json_object(
                    path,
                    "--gsub",
                    dict,
                    "NExT-GQA's gsub_{val,test}.json, "
                    "{video_id: {duration, fps, location}} (is it the --video-map file?)",
                )
            )
        self.video_map = {}
        for path in self.inputs["video_map"]:
            self.video_map.update(
                json_object(
                    path, "--video-map", str, "map_vid_vidorID.json, {video_id: 'folder/stem'} (is it a --gsub file?)"
                )
            )
        return super().items()

    def qid(self, item: dict[str, Any]) -> str | None:
        video_id, qid = first(item, "video_id"), first(item, "qid")
        return None if video_id is None or qid is None else f"{video_id}_{qid}"

    def draft(self, item: dict[str, Any]) -> Draft:
        video_id, qid, question, answer = (str(v) for v in need(item, "video_id", "qid", "question", "answer"))
        options = [str(item[f"a{i}"]) for i in range(5) if item.get(f"a{i}") not in (None, "")]
        if len(options) < 2:
            raise Skip("no_options", f"{len(options)} of a0..a4 present")
        grounding = self.gsub.get(video_id)
        if grounding is None:
            raise Skip("missing_annotation", f"video {video_id} not in --gsub")
        location = grounding.get("location")
        if not isinstance(location, dict):
            raise Skip("unknown_format", f"--gsub entry {video_id} has no 'location' object")
        spans = location.get(qid)
        if spans is None:
            raise Skip("missing_annotation", f"qid {qid} of video {video_id} not in --gsub")
        stem = self.video_map.get(video_id)
        if stem is None:
            raise Skip("missing_annotation", f"video {video_id} not in --video-map")
        fps = grounding.get("fps")
        if item.get("frame_count") not in (None, "") and fps:
            duration = seconds(item["frame_count"], "frame_count") / seconds(fps, "fps")
        else:
            duration = seconds(need(grounding, "duration"), "duration")
        letter, matches = letter_of_text(answer, options)
        return Draft(
            qid=f"{video_id}_{qid}",
            question=question,
            options=options,
            answer=letter,
            answer_matches=matches,
            videos=(str(stem),),
            duration=round(duration, 3),
            spans=spans,
            video_id=video_id,
            extra={"type": item.get("type"), "video_id": video_id},
        )
