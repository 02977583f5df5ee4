import pytest

from zoomzero_plugin.gvqa.parsing import parse_response
from zoomzero_plugin.gvqa.prompts import FORMAT_INSTRUCTION, grounding_prompt, paper_options, zoom_prompt
from zoomzero_plugin.question import format_options

# The paper's prompt as the authors' released evaluation code builds it (xiaoqian-shen/Zoom-Zero
# src_eval/eval_nextgqa.py: "This video in total has " + str(round(len, 2)) + " seconds. " + "Answer the
# question: " + q + " according to the content of the video. Select the answer from: " + ' '.join(options) + "\n"
# + QUESTION_TEMPLATE), typed here by hand from that file with its escapes rendered.
PAPER = (
    "<video>This video in total has 42.0 seconds. Answer the question: What happens? according to the content of "
    "the video. Select the answer from: (A) x (B) y\n"
    "\n"
    "Output key information relevant to the question and options, marking precise timestamps or time ranges in "
    "seconds within <time> </time> tags, and present them in an interleaved analysis format. Enclose the full "
    "analysis in <think> </think> tags. For example: <think> After folding the face towel <time> from 5.2s to "
    "10.4s </time>, the person placed it on the bed <time> from 20.3s to 30.8s </time>.</think>\n"
    "\n"
    "Then, provide your answer within the <answer> </answer> tags, output the corresponding letter of the option. "
    "At the same time, in the <glue> </glue> tags, include only the precise video segments (in seconds) that "
    "strongly support your answer, in the format of [(s1, e1), (s2, e2), ...]. Do not list unrelated time ranges. "
    "For example: <answer>A</answer>\n"
    "<glue>[(20.3, 30.8)]</glue>.\n"
)
# The fine pass (authors' training code, verl/utils/dataset_video.py: problem + ". " + "Respond with only the
# letter of the option.", problem with its double space after "from:").
PAPER_ZOOM = (
    "<video>Answer the question: What happens? according to the content of the video. Select the answer "
    "from:  (A) x (B) y. Respond with only the letter of the option."
)


def test_the_default_prompt_is_the_papers_word_for_word():
    assert grounding_prompt("What happens?", ["x", "y"], duration=42.0) == PAPER
    assert grounding_prompt("What happens?", ["(A) x", "B. y"], duration=42.0) == PAPER  # labels not doubled


def test_the_paper_states_the_duration_as_the_authors_round_it():
    assert "has 61.23 seconds. " in grounding_prompt("Q", ["x", "y"], duration=61.2345)
    assert "has 60.0 seconds. " in grounding_prompt("Q", ["x", "y"], duration=60)
    assert "seconds" not in grounding_prompt("Q", ["x", "y"]).split("Answer the question")[0]


def test_options_as_the_authors_join_them():
    assert paper_options(["red", "(B) green", "C. blue"]) == "(A) red (B) green (C) blue"


def test_a_response_following_the_papers_examples_is_well_formatted():
    response = (
        "<think> After folding the face towel <time> from 5.2s to 10.4s </time>, the person placed it on "
        "the bed <time> from 20.3s to 30.8s </time>.</think>\n<answer>A</answer>\n<glue>[(20.3, 30.8)]</glue>"
    )
    parsed = parse_response(response, 60.0)
    assert parsed.format_ok and parsed.answer == "A" and parsed.spans == ((20.3, 30.8),)


def test_the_paper_fine_pass_prompt_word_for_word():
    assert zoom_prompt("What happens?", ["x", "y"]) == PAPER_ZOOM
    assert zoom_prompt("What happens?", ["x", "y"], video=False) == PAPER_ZOOM.removeprefix("<video>")


def test_concise_style_is_the_previous_wording():
    assert format_options(["red", "(B) green", "C. blue", "D: pink"]) == "(A) red\n(B) green\n(C) blue\n(D) pink"
    p = grounding_prompt("What happens?", ["x", "y"], duration=42.0, style="concise")
    assert p.startswith("<video>The video is 42.0 seconds long. Find the moments")
    assert "(A) x\n(B) y" in p and p.endswith("(B) y")
    assert grounding_prompt("Q", ["x"], video=False, style="concise").count("<video>") == 0
    z = zoom_prompt("What happens?", ["x", "y"], style="concise")
    assert z == "<video>Question: What happens?\nOptions:\n(A) x\n(B) y\nRespond with only the letter of the option."


def test_the_example_in_the_concise_instruction_is_a_perfect_response():
    example = FORMAT_INSTRUCTION.split("For example: ", 1)[1]
    assert parse_response(example).format_ok


def test_an_unknown_style_is_refused():
    with pytest.raises(ValueError, match="paper"):
        grounding_prompt("Q", ["x", "y"], style="fancy")
