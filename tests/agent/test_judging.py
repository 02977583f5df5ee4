"""The four judging cases where this package and the release (zsgvivo/VideoZoomer @ 5638153) differ or could, each
decided as docs/fidelity.md says (VideoZoomer, *Deliberate differences*, rows 10, 11, 16 and 17).

The release's rules, read from ``verl/utils/reward_score/openr1.py`` (``judge_multi_choice``) and
``toolcall_format.py`` (``format_reward``): accuracy compares the last ``<answer>`` content (stripped) with the
ground truth exactly, then its ``\\boxed{}``, then the last ``[A-Z]\\.``: all upper case; the ground truth loses
one trailing ``.``; the final turn of a multi-turn response must match ``^<think>.*</think>.*<answer>.*</answer>$``
unstripped. ``multimodal_dataset.make_conversation_multimodal_hf`` formats ``"{Question}{post_prompt}"`` with
``post_prompt=None`` for datasets loaded from disk, so their question ends with ``None``.
"""

import pytest

from zoomzero_plugin.agent import AgentBudget, Trajectory, VideoInfo, get_prompts, question_text, score_response
from zoomzero_plugin.agent.reward import read_truth
from zoomzero_plugin.ground_truth import GroundTruth, truth_letter

from ..helpers import played

CALL = '<think>Near 10 s.</think><video_zoom>{"segment": [10, 12], "fps": 2}</video_zoom>'


def response(*turns):
    return played(Trajectory(VideoInfo("v.mp4", 3000, 30.0), AgentBudget(), get_prompts("eval")), list(turns))


def test_a_lowercase_letter_names_its_option():
    # release: "b" != "B", no boxed content, no "[A-Z]." -> accuracy 0; here a lone letter names the option
    s = score_response(response(CALL, "<think>It is red.</think><answer>b</answer>"), "B")
    assert (s["accuracy"], s["format"]) == (1.0, 1.0)
    assert score_response("<think>x</think><answer>(c)</answer>", "C")["accuracy"] == 1.0
    # only a lone letter: a lowercase word is not read as its first letter
    assert score_response("<think>x</think><answer>a cat</answer>", "A")["accuracy"] == 0.0
    assert score_response("<think>x</think><answer>b. the red one</answer>", "B")["accuracy"] == 0.0


def test_whitespace_before_the_final_turn_keeps_the_format_point():
    # release: the final turn is matched unstripped, so "\n<think>" fails ^<think>; here whitespace is not format
    for lead in ("\n", "  ", "\n\n "):
        s = score_response(response(CALL, lead + "<think>It is red.</think><answer>B</answer>"), "B")
        assert (s["accuracy"], s["format"]) == (1.0, 1.0), repr(lead)
    trailing = score_response(response(CALL, "<think>It is red.</think><answer>B</answer>\n\n"), "B")
    assert (trailing["accuracy"], trailing["format"]) == (1.0, 1.0)
    # a word before <think> still loses it
    assert score_response(response(CALL, "So <think>red</think><answer>B</answer>"), "B")["format"] == 0.0


@pytest.mark.parametrize(
    "written, letter",
    [
        ("B.", "B"),
        (" B. ", "B"),
        ("B", "B"),
        ("(B)", "B"),
        ("b", "B"),
        ("(B).", "B"),
        ("B..", None),
        ("B. red", None),
        ("", None),
        (".", None),
        ("AB", None),
    ],
)
def test_a_ground_truth_letter_may_carry_the_releases_period(written, letter):
    assert truth_letter(written) == letter


def test_the_reward_reads_a_period_after_the_truth_letter():
    assert read_truth("B.") == ("B", (), None)
    assert score_response("<think>x</think><answer>B</answer>", "B")["accuracy"] == 1.0
    row = GroundTruth.parse({"answer": "C.", "options": ["a", "b", "c"], "duration": 10, "qid": "q"})
    assert row.answer == "C"
    with pytest.raises(ValueError, match="not a letter among 3 options"):
        GroundTruth.parse({"answer": "D.", "options": ["a", "b", "c"], "duration": 10, "qid": "q"})


def test_the_question_carries_no_releases_none():
    # the release's loader for datasets on disk appends str(None); the question here ends with its last option
    text = question_text("What colour is the cup?", ["red", "blue"])
    assert text == "<video>Question: What colour is the cup?\nOptions:\n(A) red\n(B) blue"
    assert not text.endswith("None")
