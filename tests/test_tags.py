"""The linear-time scanning primitives: hand cases, and hypothesis against their definitions.

The definitions are the regular expressions named in ``zoomzero_plugin.tags``' docstrings; they serve as
oracles here on short inputs (where their backtracking costs nothing).
"""

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zoomzero_plugin.tags import (
    Block,
    block_ranges,
    count_blocks,
    first_block,
    first_of,
    iter_blocks,
    last_block,
    letter_at,
    read_number,
    read_pair,
    read_span_list,
    skip_space,
    tagged_pairs,
    tags,
    unclosed,
)

TEXTS = st.lists(st.sampled_from(["<a>", "</a>", "<b>", "</b>", "x", "<", "/", ">", "a", " "]), max_size=30).map(
    "".join
)


def test_blocks_by_hand():
    text = "x<a>1</a>y<a>2<a>3</a></a><a>4"
    assert [b.content for b in iter_blocks(text, "a")] == ["1", "2<a>3"]  # content runs to the first closing tag
    assert first_block(text, "a") == Block(1, 4, 9, "1")
    assert last_block(text, "a") == Block(10, 13, 22, "2<a>3")
    assert text[13:18] == "2<a>3" and text[10:22] == "<a>2<a>3</a>"
    assert count_blocks(text, "a") == 2 and count_blocks(text, "a", limit=1) == 1
    assert unclosed(text, "a") == 26  # the "<a>4" at the end
    assert block_ranges(text, "a") == [(1, 9), (10, 22), (26, 30)]
    assert first_block("<a>never closed", "a") is None and last_block("</a><a>", "a") is None
    assert unclosed("<a>1</a>", "a") is None and unclosed("", "a") is None


@pytest.mark.parametrize("bad", ["", "a>", "<a", "a b", "1a", None])
def test_tag_names_are_checked(bad):
    with pytest.raises(ValueError):
        tags(bad)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXTS)
def test_blocks_follow_the_lazy_regex_definition(text):
    ref = [(m.start(), m.start(1), m.end(), m.group(1)) for m in re.finditer(r"<a>(.*?)</a>", text, re.DOTALL)]
    got = [(b.start, b.content_start, b.end, b.content) for b in iter_blocks(text, "a")]
    assert got == ref
    assert (first_block(text, "a") is None) == (not ref)
    if ref:
        assert (first_block(text, "a").start, last_block(text, "a").start) == (ref[0][0], ref[-1][0])
        assert last_block(text, "a").content == ref[-1][3]
    else:
        assert last_block(text, "a") is None
    # an unclosed opening tag: the first "<a>" after the last complete block (none if none)
    tail = text.find("<a>", ref[-1][2] if ref else 0)
    assert unclosed(text, "a") == (None if tail < 0 else tail)
    assert block_ranges(text, "a") == [(s, e) for s, _, e, _ in ref] + ([] if tail < 0 else [(tail, len(text))])


def test_first_of():
    assert first_of("xx</a><a>", ["<a>", "</a>"]) == (2, "</a>")
    assert first_of("<ab", ["<a", "<ab"]) == (0, "<ab")  # a tie: the longer needle
    assert first_of("none", ["<a>"]) == (-1, None)
    assert first_of("<a><a>", ["<a>"], 1) == (3, "<a>")


@pytest.mark.parametrize(
    "text, value, end",
    [
        ("12", 12.0, 2),
        ("-1.5e3,", -1500.0, 6),
        (".5)", 0.5, 2),
        ("5.", 5.0, 2),
        ("1e", 1.0, 1),
        ("+0", 0.0, 2),
        ("1.e2", 100.0, 4),
        ("Infinity", float("inf"), 8),
        ("-inf", float("-inf"), 4),
        ("1e309", float("inf"), 5),
    ],
)
def test_read_number(text, value, end):
    assert read_number(text, 0) == (value, end)


@pytest.mark.parametrize("text", ["", "٣", "１２", "e5", "-", ".", " 1", "x1", "_1"])
def test_non_numbers(text):
    assert read_number(text, 0) is None


def test_read_number_nan():
    value, end = read_number("NaN)", 0)
    assert value != value and end == 3


def test_read_pair():
    assert read_pair("x( 1 ,2.5 )y", 1) == (1.0, 2.5, 11)
    assert read_pair("[3, 4]", 0) == (3.0, 4.0, 6)
    for bad in ["(3, 5]", "[3, 5)", "(3 5)", "(3,)", "(٣, ٥)", "(1, 2", "((1, 2))"]:
        assert read_pair(bad, 0) is None, bad


@pytest.mark.parametrize(
    "text, pairs",
    [
        ("[(1, 2), (3, 4)]", [(1.0, 2.0), (3.0, 4.0)]),
        ("  [ [1,2] , (3.5, 4e0) , ]  ", [(1.0, 2.0), (3.5, 4.0)]),
        ("[]", []),
        ("[ ]", []),
        ("[(5, 2), (nan, 1)]", None),  # checked below: read, not validated
        ("[(3,5]]", None),
        ("[(1, 2)", None),
        ("(1, 2)", None),
        ("[(1, 2)] x", None),
        ("[(1, 2),,]", None),
        ("[,]", None),
        ("[(1, 2) (3, 4)]", None),
        ("[(٣, ٥)]", None),
        ("[(1, 2)]]", None),
        ("", None),
    ],
)
def test_read_span_list(text, pairs):
    if text.startswith("[(5, 2)"):
        got = read_span_list(text)
        assert got[0] == (5.0, 2.0) and got[1][0] != got[1][0] and got[1][1] == 1.0
    else:
        assert read_span_list(text) == pairs


ASCII_NUMBER = (
    r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # digits[.digits] or .digits, an optional exponent
    r"|[-+]?(?:[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"  # nan, inf, infinity (any case, optional sign)
)
PAIR = (
    rf"(?:\(\s*(?:{ASCII_NUMBER})\s*,\s*(?:{ASCII_NUMBER})\s*\)|\[\s*(?:{ASCII_NUMBER})\s*,\s*(?:{ASCII_NUMBER})\s*\])"
)
SPAN_LIST = re.compile(rf"\s*\[\s*(?:{PAIR}(?:\s*,\s*{PAIR})*\s*,?)?\s*\]\s*")
LIST_PIECES = st.lists(
    st.sampled_from(["[", "]", "(", ")", ",", " ", "\n", "1", "2.5", "-3", "e", "nan", "٣", "x"]), max_size=25
).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(LIST_PIECES, st.builds(lambda a: f"[{a}]", LIST_PIECES)))
def test_span_lists_follow_the_grammar(text):
    """Well-formed exactly when the grammar (ASCII digits, matching brackets) matches the whole text."""
    assert (read_span_list(text) is not None) == (SPAN_LIST.fullmatch(text) is not None)


def test_tagged_pairs():
    text = "<t>(1, 2)</t> <t> [3,4] </t><t>(5, 6]</t><t>x<t>(7, 8)</t><t>(9, 10)"
    assert tagged_pairs(text, "t") == [(1.0, 2.0), (3.0, 4.0), (7.0, 8.0)]
    assert tagged_pairs("<t>(1,2)</t><t>(3,4)</t><t>(1,2)</t>", "t", distinct=True) == [(1.0, 2.0), (3.0, 4.0)]


@pytest.mark.parametrize(
    "text, found",
    [
        ("B", ("B", 0)),
        (" (C) ", ("C", 2)),
        ("D. a dog", ("D", 0)),
        ("A,", ("A", 0)),
        ("(B)x", None),
        ("Bob", None),
        ("b", None),
        ("", None),
        ("B)", ("B", 0)),
        ("\n\nE:", ("E", 2)),
        ("Ä", None),
    ],
)
def test_letter_at(text, found):
    assert letter_at(text) == found


def test_skip_space_is_unicode_whitespace():
    assert skip_space(" \t\n\u00a0\u2003x", 0) == 5 and skip_space("x", 0) == 0 and skip_space("  ", 0) == 2
