"""The one answer reader and its rules: each benchmark's official reply reader, worked out by hand from its script
(docs/metrics.md quotes them), and this package's own reading; total and linear on any text."""

import pytest
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.answers import (
    ALL_LETTERS,
    CGBENCH,
    CLOSED,
    LONGVIDEOBENCH,
    LVBENCH,
    MLVU,
    REPLY,
    TEMPLATE,
    VIDEOMME,
    answer_letter,
    last_answer,
    letter_of,
    read_letter,
)

ABCD = "ABCD"
# The replies of the report's comparison table, four options A-D. Each column: the letter the rule reads, None
# where it reads none (the benchmark then drops the question, counts it wrong, or draws a random letter: see the
# metrics tests).
REPLIES = [
    "B",
    "b",
    "b.",
    "(B)",
    "B. red",
    "The answer is C",
    "The best answer is C.",
    "I think it's B",
    "Answer: D",
    "none of these",
    "E",
    "A person walks in, so the answer is C",
    "Best option: C",
    "Based on the video, The answer is C.",
    "The correct answer is B. A is wrong",
]
TABLE = {
    # Video-MME eval_your_results.py: its phrases hold no capital A-D (the two that do are joined by missing
    # commas into strings no reply holds), so the first capital A-D anywhere: "Answer" gives A, "Best" and
    # "Based" give B; none -> "" (dropped).
    VIDEOMME: ["B", None, None, "B", "B", "C", "C", "B", "A", None, None, "A", "B", "B", "B"],
    # lmms-eval longvideobench: "Best answer:" / "Best option:" removed, then the first capital A-E; E is read
    # (and is wrong); none -> a random letter there, none here.
    LONGVIDEOBENCH: ["B", None, None, "B", "B", "C", "C", "B", "A", None, "E", "A", "C", "B", "B"],
    # lmms-eval 0.7.3's MLVU (extract_mcq_answer, capitals A-D): a letter opening the reply set apart wins ("A person"
    # too), then one ending it ("... is C", "it's B", "Answer: D"), then the later letter after an answer phrase
    # ("answer is B. A is wrong" -> A); lower case and E are no letter.
    MLVU: ["B", None, None, "B", "B", "C", "C", "B", "D", None, None, "A", "C", "C", "A"],
    # LVBench polish_answer: cut at ")", after "(", the first word's first character ("The" -> T, "I" -> I,
    # "Answer:" -> A, "none" -> n, "Based" -> B).
    LVBENCH: ["B", None, None, "B", "B", None, None, None, "A", None, None, "A", "B", "B", None],
    # CG-Bench post_process (no JSON): the letters A-H standing alone as words; several -> none here (the script
    # counts the reply right when the truth is any of them). "Best"/"Based" are words, not letters.
    CGBENCH: ["B", None, None, "B", "B", "C", "C", "B", "D", None, "E", None, "C", "C", None],
    # this package: answer phrases, a letter opening the reply (any case, "b." too), the only option letter alone
    REPLY: ["B", "B", "B", "B", "B", "C", "C", "B", "D", None, None, "C", "C", "C", "B"],
}


@pytest.mark.parametrize("rule", list(TABLE), ids=["videomme", "longvideobench", "mlvu", "lvbench", "cgbench", "reply"])
def test_the_comparison_table(rule):
    assert [letter_of(reply, ABCD, rule) for reply in REPLIES] == TABLE[rule]


def test_video_mme_removes_its_phrases_verbatim_joined_strings_and_all():
    # "Best answer:Best option:" is one string in the script (a missing comma): removed, the C is the first capital
    assert letter_of("Best answer:Best option: C", ABCD, VIDEOMME) == "C"
    assert letter_of("Best answer: C", ABCD, VIDEOMME) == "B"  # not removed: B of "Best"
    assert letter_of("The best option is C", ABCD, VIDEOMME) == "C"
    assert letter_of("the answer is c", ABCD, VIDEOMME) is None  # capitals only


def test_longvideobench_reads_its_five_letters_whatever_the_options():
    assert letter_of("E", "AB", LONGVIDEOBENCH) == "E" and letter_of("F", ALL_LETTERS, LONGVIDEOBENCH) is None
    # one pass per phrase, as str.replace: the "Best option:" that removing one forms is kept, its B read
    assert letter_of("Best Best option:option: C", ABCD, LONGVIDEOBENCH) == "B"
    assert read_letter("Best option: D", ABCD, LONGVIDEOBENCH) == ("D", 13)  # the index in the reply as written


@pytest.mark.parametrize(
    "reply, letter",
    [
        # the shapes ordinary replies take, each read as lmms-eval reads it
        ("A", "A"),
        ("A.", "A"),
        ("(A)", "A"),
        ("A. the chef", "A"),
        ("A) the chef", "A"),
        ("A: the chef", "A"),
        (" A ", "A"),
        ('"A".', "A"),  # quotes and periods stripped from both ends first
        # a reply to MLVU's own "Best option: (" pre-fill reads as its check_ans reads it
        ("B) the cup", "B"),
        ("B", "B"),
        # ranks: opening (10) > ending (9) > after a phrase (7) > (B) (6) > B. (5) > B: (4) > B) (3) > "B " (2)
        ("The answer is C", "C"),  # ends with C
        ("Maybe (B) or C.", "C"),  # ends with C (the period stripped)
        ("It is (B), not C!", "C"),
        ("Options (B) and D. here", "B"),  # (B) outranks D.
        ("Options D. and B: here", "D"),  # D. outranks B:
        ("So B) or D here", "B"),  # B) outranks "D "
        ("The answer is B because of D here", "D"),  # after the phrase both: the later wins
        ("Xyz Cab", "C"),  # nothing else: the last capital A-D anywhere (fallback)
        ("b", None),  # capitals only
        ("E. the chef", None),  # lmms-eval's MLVU reads A-D whatever the question
        ("", None),
        ("?!", None),
    ],
)
def test_mlvu_reads_replies_as_lmms_eval_does(reply, letter):
    assert letter_of(reply, "ABCDE", MLVU) == letter


@pytest.mark.parametrize(
    "reply, letter",
    [
        ("(C) red", "C"),
        ("Option (D) red", "D"),
        ("( B ) x", "B"),
        ("A. red", "A"),
        ("", None),
        ("()", None),
        ("Answer (C", "C"),
        ("x (B (C)", "B"),
    ],
)
def test_lvbench_polishes_the_answer(reply, letter):
    assert letter_of(reply, ABCD, LVBENCH) == letter


@pytest.mark.parametrize(
    "reply, letter",
    [
        ('```json\n{"result": "C"}\n```', "C"),
        ('```json\n{"result": C}\n```', "C"),  # a bare value is quoted by the script's re.sub
        ('A or B? ```json\n{"result": "D"}\n```', "D"),  # the JSON wins over the letters around it
        ('```json\n{"result": "b"}\n```', None),  # the script counts it wrong; no letter here
        ('```json\n{"answer": "C"}\n``` so C', "C"),  # no "result": the letters standing alone
        ("```json\nnot json\n``` I pick H", "H"),
        ("I choose B, not (A)", None),  # two letters
        ("B and again B", "B"),
        ("Ich wähle B", "B"),
    ],
)
def test_cgbench_reads_the_json_result_then_letters_standing_alone(reply, letter):
    assert letter_of(reply, ABCD, CGBENCH) == letter


@pytest.mark.parametrize(
    "reply, letter",
    [
        ("<think>A or B</think><answer>C</answer>", "C"),  # every rule reads the <answer> block first
        ("<think>A</think><answer>the answer is (d)</answer>", "D"),
        ("The answer is \\boxed{C}.", "C"),
        ("answer: b.", "B"),
        ("The answer is Charlie", None),  # a word, not a letter
        ("I think A, or maybe C", None),  # two options named
        ("C", None),  # three options A-C? no: two (A, B)
        ("It is B because B is red", "B"),
        ("A or C", None),  # a letter opening the reply counts set apart ("A.", "(A)", "A:"), else as any other
        ("B red cup", "B"),
        ("A man walks in", "A"),  # the article reads as option A: the only capital standing alone (a known limit)
    ],
)
def test_the_package_reply_rule(reply, letter):
    assert letter_of(reply, "AB" if reply == "C" else ABCD, REPLY) == letter


def test_every_rule_reads_the_answer_block_first():
    reply = "<think>A man, B and D</think><answer>C</answer>"
    assert {letter_of(reply, ABCD, rule) for rule in TABLE} == {"C"}
    assert letter_of("<think>Based on it</think><answer>C", ABCD, VIDEOMME) == "C"  # the close cut off


def test_the_templates_reading_is_unchanged():
    """The training readers (the zoom pass, the VideoZoomer protocol) read as before: the letter opening the
    block or reply, any capital; a closed block only for the protocol."""
    assert answer_letter("I think it's B") == "I" and answer_letter("The answer is B") is None
    assert answer_letter("b.") is None and answer_letter("(b)") == "B"
    assert letter_of("<answer>B", rule=CLOSED) is None and letter_of("<answer>\\boxed{C}</answer>", rule=CLOSED) == "C"


def test_the_index_is_where_the_letter_stands_in_the_reply():
    assert read_letter("<think>x</think><answer> (B) </answer>", ABCD, TEMPLATE) == ("B", 26)
    assert read_letter("So the answer is C.", ABCD, REPLY) == ("C", 17)
    assert read_letter("The best answer is D", ABCD, VIDEOMME) == ("D", 19)
    assert read_letter("I think (C) fits", ABCD, LVBENCH) == ("C", 9)  # cut at ")", from after "("
    assert read_letter(' "(B)" ', ABCD, MLVU) == ("B", 3)  # spaces and quotes stripped, then inside "(B)"
    assert read_letter("x D) y C.", ABCD, MLVU) == ("C", 7)  # "C." ends the reply once its period is stripped


RULES = [*TABLE, TEMPLATE, CLOSED]
ALPHABET = st.sampled_from(
    list("ABCDEHIabc ().:,{}\\\n")
    + [
        "<answer>",
        "</answer>",
        "boxed{",
        "```json",
        "```",
        "The answer is",
        "Best option:",
        '{"result": ',
        "answer:",
        "é",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(ALPHABET, max_size=40).map("".join),
    st.sampled_from(["AB", ABCD, "ABCDEFGH", None]),
    st.sampled_from(RULES),
)
def test_any_reply_reads_to_one_allowed_letter_or_none(reply, letters, rule):
    found = read_letter(reply, letters, rule)
    if found is not None:
        letter, at = found
        allowed = rule.letters or letters or ALL_LETTERS
        assert letter in allowed and reply[at].upper() == letter


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.binary(max_size=20), st.text(max_size=60)), st.sampled_from(RULES))
def test_anything_at_all_is_read_without_raising(value, rule):
    letter_of(value, ABCD, rule)


@pytest.mark.parametrize(
    "unit",
    [
        "<answer>",
        "The answer is ",
        "The answerThe answer is",
        "B ",
        "(",
        ")",
        "```json",
        "b",
        "Best option:",
        "A B ",
        "answer: ",
    ],
)
def test_every_rule_is_linear_on_a_megabyte_of_repetition(unit):
    text = unit * (1_000_000 // len(unit))
    for rule in RULES:
        letter_of(text, ABCD, rule)
        assert letter_of(text + "<answer>C</answer>", ABCD, rule) == "C"  # a quadratic scan would not return


def test_the_reply_shapes_table_of_docs_metrics_is_what_the_rules_read():
    """docs/metrics.md's table of reply shapes (each cell the letter a rule reads, – for none) is true."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "metrics.md").read_text(encoding="utf-8")
    table = text[text.index("| reply | `videomme` |") :].split("\n\n")[0].splitlines()[2:]
    rules = [VIDEOMME, LONGVIDEOBENCH, MLVU, LVBENCH, CGBENCH, REPLY]
    assert len(table) == 10
    for line in table:
        shapes, *cells = (cell.strip() for cell in line.strip("|").split("|"))
        for shape in shapes.split(" · "):
            reply = shape.strip("`").replace("\\\\", "\\")
            assert [letter_of(reply, ABCD, rule) or "–" for rule in rules] == cells, reply


@pytest.mark.parametrize(
    "reply, letter",
    [
        ("B, not A", "B"),  # a capital followed by a comma is set apart: B, though A also stands alone
        ("B. not A", "B"),
        ("B: not A", "B"),
        ("B) not A", "B"),
        ("B; not A", None),  # a semicolon does not set it apart: two letters stand alone, no single answer
        ("B - not A", None),
    ],
)
def test_a_capital_is_set_apart_by_exactly_a_period_colon_comma_or_parenthesis(reply, letter):
    assert letter_of(reply, ABCD, REPLY) == letter


def test_the_closed_block_is_the_last_opening_before_the_last_closing_tag():
    # an <answer> opened after the last </answer> (a reply cut off) is not the closed block: A is, not nothing
    text = "<answer>A</answer> then <answer>B"
    assert letter_of(text, rule=CLOSED) == "A" and last_answer(text) == ("A", "A")
    assert last_answer("<answer>x <answer>C</answer>") == ("C", "C")  # the opening nearest the closing tag
