"""What the zoomzero model reads from an lmms-eval request and what it replies (no lmms-eval needed)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, strategies as st

from tests.helpers import within_seconds
from zoomzero_plugin.errors import DataError, UsageError, VideoError
from zoomzero_plugin.inference.passes import Question
from zoomzero_plugin.integrations.lmms_eval.questions import ask, lettered_options, reply
from zoomzero_plugin.integrations.lmms_eval.task import cited
from zoomzero_plugin.rows import make_row

COLOURS = ("red", "green", "blue", "yellow")
Q = "What colour is the square?"

# The prompts lmms-eval's tasks write (their doc_to_text with the default post prompts), for a question and 4 options.
PROMPTS = {
    "longvideobench": f"{Q}\nA. red\nB. green\nC. blue\nD. yellow\nAnswer with the option's letter from the given "
    "choices directly.\n",
    "videomme": "Select the best answer to the following multiple-choice question based on the video and the "
    "subtitles. Respond with only the letter (A, B, C, or D) of the correct option.\n"
    f"{Q}\nA. red\nB. green\nC. blue\nD. yellow\n\nAnswer with the option's letter from the given choices "
    "directly.",
    "mlvu": f"Question: {Q}\nOptions:\n(A) red\n(B) green\n(C) blue\n(D) yellow\nOnly give the best option.\n"
    "Best option: (",
    "lvbench": f"{Q}\n(A) red\n(B) green\n(C) blue\n(D) yellow\nAnswer the question with the option letter",
}


@pytest.mark.parametrize("task", sorted(PROMPTS))
def test_the_question_and_options_of_lmms_evals_video_tasks(task):
    assert lettered_options(PROMPTS[task]) == (
        (Q if task != "videomme" else PROMPTS[task].split("\n")[0] + "\n" + Q),
        COLOURS,
    )


def test_which_lines_are_options():
    # the last run A, B, … in order wins; a sentence starting with "A" is no option; one option is no run
    text = "A man walks in.\nA. sits\nB. runs\nWhich is true?\nA) x\nB) y\nC: z\nthanks"
    assert lettered_options(text) == ("A man walks in.\nA. sits\nB. runs\nWhich is true?", ("x", "y", "z"))
    assert lettered_options("Q?\nA. only one\nanswer") is None
    assert lettered_options("Q?\nA. a\nC. c") is None  # out of order
    assert lettered_options("Q?\nB. b\nC. c") is None  # does not start at A
    assert lettered_options("Q?\nA. a\nB. b\nA. x\nB. y\nC. z") == ("Q?\nA. a\nB. b", ("x", "y", "z"))
    assert lettered_options("no options at all") is None and lettered_options("") is None


options_text = st.text(st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc")), max_size=30).map(str.strip)


@given(st.text(max_size=300))
def test_any_text_is_read_without_error(text):
    found = lettered_options(text)
    assert found is None or (len(found[1]) >= 2 and all("\n" not in o for o in found[1]))


@given(st.lists(options_text, min_size=2, max_size=26), st.sampled_from(["{L}. ", "({L}) ", "{L}) ", "{L}: "]))
def test_written_options_are_read_back(options, mark):
    prompt = "Which one?\n" + "\n".join(mark.format(L=string.ascii_uppercase[i]) + o for i, o in enumerate(options))
    assert lettered_options(prompt + "\nAnswer with a letter.") == ("Which one?", tuple(options))


def test_a_long_prompt_is_read_in_linear_time():
    prompt = "\n".join(["A. x", "B. y", "word"] * 100_000)
    with within_seconds(10):
        assert lettered_options(prompt)[1] == ("x", "y")


def test_replies_cite_the_records_spans_and_read_back_exactly():
    record = {"qid": "q", "answer": "B", "spans": [[12.5, 20.0], [31.125, 33.5]]}
    text = reply(record, grounded=True)
    assert text == "<answer>B</answer><glue>[(12.5, 20.0), (31.125, 33.5)]</glue>"
    assert cited("q", text) == record
    assert reply({"answer": None, "spans": []}, grounded=True) == "<answer></answer><glue>[]</glue>"
    assert cited("q", "<answer></answer><glue>[]</glue>") == {"qid": "q", "answer": None, "spans": []}
    assert reply(record, grounded=False) == "B" and reply({"answer": None}, grounded=False) == ""


def test_a_dataset_row_is_asked_as_zoomzero_eval_asks_it(evidence_video):
    row = make_row(
        qid="q7",
        question=Q,
        options=COLOURS,
        answer="C",
        duration=12.0,
        video=str(evidence_video),
        spans=[(3.0, 5.0)],
        prompt="<video>the row's own prompt",
    )
    asked = ask(row, "ignored", lambda doc: ["ignored"], "nextgqa", 0)
    assert asked.grounded and asked.task == "nextgqa" and asked.question == Question.from_row(row)
    assert asked.question.prompt == "<video>the row's own prompt"
    with pytest.raises(DataError, match="task nextgqa, document 0: a dataset row whose answer column"):
        ask({**row, "answer": "{}"}, "", lambda doc: [], "nextgqa", 0)
    with pytest.raises(VideoError, match="no such video file"):
        ask({**row, "videos": ["/no/such.mp4"]}, "", lambda doc: [], "nextgqa", 0)


def test_a_task_document_is_asked_from_its_prompt_and_video(evidence_video):
    doc = {"question": Q, "video_path": str(evidence_video)}
    asked = ask(doc, PROMPTS["videomme"], lambda d: [d["video_path"]], "videomme", 3)
    # the document's own question replaces the instruction lines before it; the duration is the file's: 48 / 4 fps
    assert asked.question == Question("videomme/3", str(evidence_video), Q, COLOURS, 12.0)
    assert not asked.grounded
    with pytest.raises(UsageError, match="task mmmu, document 1: its prompt has no lettered options"):
        ask({}, "Describe the video.", lambda d: [str(evidence_video)], "mmmu", 1)
    with pytest.raises(UsageError, match="doc_to_visual gives 2 item"):
        ask({}, PROMPTS["lvbench"], lambda d: ["a.mp4", "b.mp4"], "lvbench", 1)
    with pytest.raises(UsageError, match=r"gives 1 item\(s\) \(Image\)"):
        from PIL import Image

        ask({}, PROMPTS["lvbench"], lambda d: [Image.new("RGB", (2, 2))], "lvbench", 1)
    with pytest.raises(VideoError, match="no such video file"):
        ask({}, PROMPTS["lvbench"], lambda d: ["/no/such.mp4"], "lvbench", 1)
