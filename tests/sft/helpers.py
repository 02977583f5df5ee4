"""Shared pieces of the SFT tests: a scripted teacher that plays the agent protocol, and how to run the export."""

from __future__ import annotations

import json

from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.question import format_options

CALL = '<think>The overview is too coarse; zoom in.</think><video_zoom>{"segment": [%s, %s], "fps": %s}</video_zoom>'
ANSWER = "<think>The clip shows it clearly.</think><answer>%s</answer>"


def truths(rows_path) -> dict[str, GroundTruth]:
    """Options block of each question → its truth (the teacher finds the question it is asked by its options)."""
    out = {}
    for line in open(rows_path, encoding="utf-8"):
        truth = GroundTruth.parse(json.loads(json.loads(line)["answer"]))
        out[format_options(truth.options)] = truth
    return out


def user_text(body) -> str:
    """All text the teacher was sent (content parts joined)."""
    texts = []
    for m in body["messages"]:
        content = m["content"]
        texts += [content] if isinstance(content, str) else [p["text"] for p in content if p["type"] == "text"]
    return "".join(texts)


class ScriptedTeacher:
    """Turn 1: a call over the evidence span at 2 fps; turn 2: the answer. ``wrong``/``bad_call`` hold qids
    answered wrongly / called with too many frames (a broken budget)."""

    def __init__(self, rows_path, wrong=(), bad_call=()):
        self.truths = truths(rows_path)
        self.wrong, self.bad_call = set(wrong), set(bad_call)

    def truth_of(self, body) -> GroundTruth:
        text = user_text(body)
        for block, truth in self.truths.items():
            if block in text:
                return truth
        raise AssertionError("the teacher could not find the question")

    def __call__(self, body, n):
        truth = self.truth_of(body)
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        if turns == 0:
            s, e = truth.spans[0] if truth.spans else (1.0, 3.0)
            fps = 20 if truth.qid in self.bad_call else 2
            return CALL % (round(s, 1), round(e, 1), fps)
        letter = truth.answer
        if truth.qid in self.wrong:
            letter = "A" if letter != "A" else "B"
        return ANSWER % letter
