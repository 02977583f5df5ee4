"""The fine pass's reader: a bare letter or ``<answer>B</answer>`` (what the paper's figures show the model write)."""

import pytest
from hypothesis import given, strategies as st

from zoomzero_plugin.answers import answer_letter


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("B", "B"),
        (" (C) ", "C"),
        ("D. a red cup", "D"),
        ("<answer>A</answer>", "A"),
        ("<answer> (B) green </answer>", "B"),
        ("<think>maybe A</think><answer>C</answer>", "C"),
        ("<answer>A</answer> no, <answer>D</answer>", "D"),  # the last answer counts
        ("<answer>B", "B"),  # cut off by the token limit before the closing tag
        ("<answer>", None),
        ("<answer>the cup</answer>", None),
        ("The answer is B", None),
        ("", None),
        (None, None),
    ],
)
def test_answer_letter(text, letter):
    assert answer_letter(text) == letter


@given(st.text(max_size=200))
def test_answer_letter_is_total(text):
    result = answer_letter(text)
    assert result is None or (len(result) == 1 and result.isupper())


@pytest.mark.parametrize("unit", ["<answer>", "<answer>B", " ", "B ", "</answer>", "(<answer>"])
def test_answer_letter_on_a_megabyte_of_repetition(unit):
    text = unit * (1_000_000 // len(unit))
    answer_letter(text)  # linear: str.rfind / str.find, an anchored letter match
    assert answer_letter(text + "<answer>C</answer>") == "C"
