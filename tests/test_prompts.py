from zoomzero_plugin.parsing import parse_response
from zoomzero_plugin.prompts import FORMAT_INSTRUCTION, format_options, grounding_prompt, zoom_prompt


def test_options_get_one_label_each():
    assert format_options(["red", "(B) green", "C. blue", "D: pink"]) == "(A) red\n(B) green\n(C) blue\n(D) pink"


def test_grounding_prompt_has_one_video_and_the_duration():
    p = grounding_prompt("What happens?", ["x", "y"], duration=42.0)
    assert p.startswith("<video>") and p.count("<video>") == 1
    assert "42.0 seconds" in p and "(A) x\n(B) y" in p and p.endswith("(B) y")
    assert grounding_prompt("Q", ["x"], video=False).count("<video>") == 0


def test_the_example_in_the_instruction_is_a_perfect_response():
    example = FORMAT_INSTRUCTION.split("For example: ", 1)[1]
    assert parse_response(example).format_ok


def test_zoom_prompt_asks_for_a_letter_only():
    p = zoom_prompt("What happens?", ["x", "y"])
    assert p.startswith("<video>Question: What happens?") and p.endswith("Respond with only the letter of the option.")
    assert "<glue>" not in p and "<think>" not in p
