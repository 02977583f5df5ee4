import pytest

from zoomzero_plugin.parsing import extract_letter, glue_char_ranges, parse_response, parse_span_list

GOOD = "<think>The cup rises <time>(3.0, 5.0)</time>.</think>\n<answer>B</answer>\n<glue>[(3.0, 5.0), (8, 9.5)]</glue>"


def test_well_formed_response():
    p = parse_response(GOOD, duration=12)
    assert p.answer == "B"
    assert p.spans == ((3.0, 5.0), (8.0, 9.5))
    assert p.time_spans == ((3.0, 5.0),)
    assert p.format_ok and p.matches_template and p.problems == ()


def test_spans_are_clamped_and_merged():
    p = parse_response("<think>x</think><answer>A</answer><glue>[(2, 6), [5, 40]]</glue>", duration=12)
    assert p.spans == ((2.0, 12.0),)
    assert p.format_ok


@pytest.mark.parametrize(
    "glue, problem",
    [
        ("[(nan, 2)]", "invalid_spans:1"),
        ("[(1, inf)]", "invalid_spans:1"),
        ("[(-1, 2)]", "invalid_spans:1"),
        ("[(5, 2)]", "invalid_spans:1"),
        ("[(1, 2e9)]", "invalid_spans:1"),
        ("[(50, 60)]", "invalid_spans:1"),  # starts after the 12 s video ends
        ("[]", "glue_empty"),
        ("(1, 2)", "glue_unparsable"),
        ("[(1, 2)", "glue_unparsable"),
        ("[(1 2)]", "glue_unparsable"),
        ("[(1, 2), (a, b)]", "glue_unparsable"),
    ],
)
def test_bad_glue_fails_format(glue, problem):
    p = parse_response(f"<think>x</think><answer>A</answer><glue>{glue}</glue>", duration=12)
    assert not p.format_ok
    assert problem in p.problems


def test_one_invalid_span_keeps_the_valid_ones_but_fails_format():
    p = parse_response("<think>x</think><answer>A</answer><glue>[(1, 2), (5, 3)]</glue>", duration=12)
    assert p.spans == ((1.0, 2.0),)
    assert p.invalid_spans == 1 and not p.format_ok


@pytest.mark.parametrize(
    "text, problem",
    [
        ("<answer>A</answer><glue>[(1, 2)]</glue>", "template_mismatch"),  # no think
        ("<think>x</think><answer>A</answer>", "no_glue"),
        ("<think>x</think><answer>A</answer><glue>[(1, 2)", "truncated_glue"),
        ("<think>x</think><answer>A</answer><glue>[(1, 2)]</glue> trailing words", "template_mismatch"),
        ("<think>x</think><answer>A</answer><glue>[(1,2)]</glue><glue>[(3,4)]</glue>", "repeated_glue"),
        ("<think>x</think><answer>Bob</answer><glue>[(1,2)]</glue>", "answer_not_a_letter"),
        ("<think>x</think><glue>[(1,2)]</glue>", "no_answer"),
    ],
)
def test_template_faults_are_named(text, problem):
    p = parse_response(text, duration=12)
    assert problem in p.problems
    assert not p.format_ok


def test_partial_credit_fields_survive_template_mismatch():
    p = parse_response("I think <answer>C</answer> and <glue>[(1, 2)]</glue> done", duration=12)
    assert p.answer == "C" and p.spans == ((1.0, 2.0),) and not p.format_ok


@pytest.mark.parametrize("text, letter", [("B", "B"), (" (C) ", "C"), ("D. a dog", "D"), ("b", "B"), ("Bob", None), ("", None), ("12", None)])
def test_extract_letter(text, letter):
    assert extract_letter(text) == letter


@pytest.mark.parametrize("value", [None, b"<answer>A</answer>", 42, "", "\x00" * 100, "<" * 10000])
def test_non_strings_and_junk_never_raise(value):
    p = parse_response(value)
    assert not p.format_ok


def test_span_list_accepts_brackets_and_trailing_comma():
    assert parse_span_list("[(1, 2), [3.5, 4e0],]") == ([(1.0, 2.0), (3.5, 4.0)], 0, True)


def test_glue_char_ranges():
    text = "ab<glue>[(1,2)]</glue>cd<glue>[(3"
    ranges = glue_char_ranges(text)
    assert ranges == [(2, 22), (24, len(text))]
    assert text[2:22] == "<glue>[(1,2)]</glue>"
    assert glue_char_ranges("no glue here") == []
