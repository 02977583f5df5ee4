import pytest

from zoomzero_plugin.answers import extract_letter
from zoomzero_plugin.gvqa.parsing import glue_char_ranges, parse_response, parse_span_list
from zoomzero_plugin.synthetic.adversarial import adversarial_responses

from .helpers import within_seconds

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


@pytest.mark.parametrize(
    "text, letter", [("B", "B"), (" (C) ", "C"), ("D. a dog", "D"), ("b", "B"), ("Bob", None), ("", None), ("12", None)]
)
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


@pytest.mark.parametrize("glue", ["[(٣, ٥)]", "[(１２, １３)]", "[(3,5]]", "[[3,5)]"])
def test_only_ascii_numbers_and_matching_brackets_form_a_span_list(glue):
    """Arabic-Indic and full-width digits are not seconds; '(3,5]' is not a pair (both scored format 1 once)."""
    p = parse_response(f"<think>x</think><answer>A</answer><glue>{glue}</glue>", duration=12)
    assert not p.format_ok and "glue_unparsable" in p.problems and p.spans == ()


def test_time_tags_need_ascii_numbers_and_matching_brackets():
    p = parse_response(
        "<think><time>(1, 2)</time> <time>(٣, 5)</time> <time>[6, 7)</time> <time> [8,9] </time>"
        "</think><answer>A</answer><glue>[(1, 2)]</glue>",
        duration=12,
    )
    assert p.time_spans == ((1.0, 2.0), (8.0, 9.0)) and p.format_ok


def test_last_answer_and_glue_blocks_count_and_the_first_think():
    text = (
        "<think>a</think><think>b</think><answer>A</answer><glue>[(1, 2)]</glue>"
        "<answer>C</answer><glue>[(4, 5)]</glue><answer>"
    )
    p = parse_response(text, duration=12)
    assert (p.think, p.answer, p.spans) == ("a", "C", ((4.0, 5.0),))
    assert "repeated_glue" in p.problems and not p.matches_template


def test_an_answer_block_runs_to_its_first_closing_tag():
    # "<answer><answer>B</answer>": one block whose content is "<answer>B", not a letter
    p = parse_response("<think>x</think><answer><answer>B</answer><glue>[(1, 2)]</glue>", duration=12)
    assert p.answer is None and "answer_not_a_letter" in p.problems


def test_whitespace_anywhere_between_template_parts():
    text = " \n<think> x </think>\n\t<answer> D </answer>\u2003<glue> [ ( 1 , 2 ) , ] </glue>\n"
    p = parse_response(text, duration=12)
    assert p.format_ok and p.answer == "D" and p.spans == ((1.0, 2.0),)


ADVERSARIAL = adversarial_responses()
# What each adversarial response says, read by hand: (answer, number of spans, every problem named).
_NO = {"no_answer", "template_mismatch"}
EXPECTED = {
    "unclosed <answer>": (None, 0, _NO | {"no_glue"}),
    "unclosed <glue>": (None, 0, _NO | {"truncated_glue"}),
    "'<glue>[(' * 100000": (None, 0, _NO | {"truncated_glue"}),
    "'<answer>B' repeated": (None, 0, _NO | {"no_glue"}),
    "whitespace in glue list": (None, 0, _NO | {"glue_unparsable"}),
    "whitespace in glue pair": (None, 0, _NO | {"glue_unparsable"}),
    "whitespace before answer letter": ("B", 0, {"no_glue", "template_mismatch"}),
    # one block from the first "<glue>" to the first "</glue>"; its content starts "<glue><glue>…"
    "nested <glue>": (None, 0, _NO | {"glue_unparsable"}),
    # one block: "<answer>" * 65535 + "B" is not a letter
    "nested <answer>": (None, 0, {"answer_not_a_letter", "no_glue", "template_mismatch"}),
    "empty glue blocks": (None, 0, _NO | {"glue_unparsable", "repeated_glue"}),
    "1 MB number in glue": (None, 0, _NO | {"invalid_spans:1"}),  # (9…9, 1): an infinite start
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_megabyte_responses_parse_in_linear_time(name):
    text = ADVERSARIAL[name]
    with within_seconds(10):  # linear parsing takes milliseconds; the regex parser took minutes on most
        p = parse_response(text, duration=12.0)
        ranges = glue_char_ranges(text)
    assert all(text.startswith("<glue>", lo) for lo, _ in ranges)
    if name in EXPECTED:
        answer, n_spans, problems = EXPECTED[name]
        assert (p.answer, len(p.spans), set(p.problems)) == (answer, n_spans, problems)
    if name == "well-formed list, distinct spans":
        # (0, 0.5), (1, 1.5), … in a 12 s video: the 12 pairs starting below 12 s are valid, the rest start after it
        pairs = text.count("(")
        assert p.answer == "A" and p.spans == tuple((float(i), i + 0.5) for i in range(12))
        assert p.problems == (f"invalid_spans:{pairs - 12}",) and p.matches_template
