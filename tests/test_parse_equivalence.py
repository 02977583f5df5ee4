"""The optimised span-list parser gives exactly what the straightforward one did.

``_reference_*`` below is the item-by-item parser and span cleaner the package used before they were sped up
(kept here as the definition); hypothesis compares them on span-list-like text, well-formed lists with one
mutation, and degenerate repetitions, with and without a video duration.
"""

import math
import re

from hypothesis import HealthCheck, example, given, settings, strategies as st

from zoomzero_plugin.gvqa.parsing import glue_spans, parse_response, parse_span_list
from zoomzero_plugin.spans import clean_pairs, clean_spans
from zoomzero_plugin.tags import read_span_list, tagged_pairs

_NUMBER = (
    r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # digits[.digits] or .digits, an optional exponent
    r"|[-+]?(?:[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"  # nan, inf, infinity (any case, optional sign)
)
_ITEM = re.compile(rf"([\(\[])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\)\]])\s*(,\s*)?")
_SPACE = re.compile(r"\s*")
_CLOSING = {"(": ")", "[": "]"}


def _reference_read_span_list(text):
    n = len(text)
    i = _SPACE.match(text, 0).end()
    if i >= n or text[i] != "[":
        return None
    pairs = []
    i = _SPACE.match(text, i + 1).end()
    while i < n and text[i] != "]":
        m = _ITEM.match(text, i)
        if m is None:
            return None
        opening, a, b, closing, comma = m.groups()
        if _CLOSING[opening] != closing:
            return None
        pairs.append((float(a), float(b)))
        i = m.end()
        if comma is None and i < n and text[i] != "]":
            return None
    if i >= n:
        return None
    return pairs if _SPACE.match(text, i + 1).end() == n else None


def _reference_clean(pairs, duration):
    valid, problems = [], []
    for s, e in pairs:
        if not (math.isfinite(s) and math.isfinite(e)):
            problems.append("not_finite")
        elif s < 0 or e < 0:
            problems.append("negative")
        elif s > e:
            problems.append("reversed")
        elif e > 1e6:
            problems.append("absurd")
        elif duration is not None and s >= duration:
            problems.append("outside_video")
        else:
            e = e if duration is None else min(e, float(duration))
            if e == s:
                problems.append("empty")
            else:
                valid.append((s, e))
    merged = []
    for s, e in sorted(valid):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged], len(problems)


def _reference_parse_span_list(text, duration):
    pairs = _reference_read_span_list(text)
    if pairs is None:
        return [], 0, False
    spans, invalid = _reference_clean(pairs, duration)
    return spans, invalid, True


def _same(a, b):
    return repr(a) == repr(b)  # nan == nan, and -0.0 vs 0.0 and int vs float differences show


NUMBERS = st.one_of(
    st.sampled_from(
        [
            "0",
            "1",
            "2.5",
            "-3",
            "+4",
            ".5",
            "5.",
            "1e3",
            "1E-2",
            "1e",
            "nan",
            "-inf",
            "Infinity",
            "inF",
            "1e309",
            "-0",
            "9" * 40,
            "٣",
            "１２",
            "1_0",
            "0x10",
            "",
            "12.0",
            "3.25",
            "11.9",
            "12",
            "1e6",
            "1000001",
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**6), 10**7).map(str),
)
SPACES = st.sampled_from(["", "", "", " ", "  ", "\n", "\t", "\u3000", " \n "])
BRACKETS = st.sampled_from(["()", "()", "()", "[]", "[]", "(]", "[)"])


@st.composite
def span_lists(draw):
    """``[pair, pair, …]`` with random numbers, spacing, brackets and commas; sometimes one character changed."""
    parts = [draw(SPACES), "[", draw(SPACES)]
    for k in range(draw(st.integers(0, 6))):
        if k:
            parts += [draw(st.sampled_from([",", ",", "", "", ",,", ";"])), draw(SPACES)]
        o, c = draw(BRACKETS)
        parts += [
            o,
            draw(SPACES),
            draw(NUMBERS),
            draw(SPACES),
            draw(st.sampled_from([",", ",", ",", "", " "])),
            draw(SPACES),
            draw(NUMBERS),
            draw(SPACES),
            c,
            draw(SPACES),
        ]
    parts += [
        draw(st.sampled_from(["", "", ",", ", "])),
        draw(st.sampled_from(["]", "]", "]", "", "]]", "])"])),
        draw(SPACES),
    ]
    text = "".join(parts)
    if text and draw(st.booleans()):
        i = draw(st.integers(0, len(text) - 1))
        text = text[:i] + draw(st.sampled_from(["", "(", ")", "[", "]", ",", " ", "x", "1", "."])) + text[i + 1 :]
    return text


@st.composite
def usual_lists(draw):
    """``[(a, b), [c, d], …]`` as models write them (one space after each comma), sometimes one character changed."""
    pairs = [f"{o}{a}, {b}{c}" for (o, c), a, b in draw(st.lists(st.tuples(BRACKETS, NUMBERS, NUMBERS), max_size=5))]
    text = "[" + ", ".join(pairs) + draw(st.sampled_from(["", "", ",", ", ", ",,"])) + "]"
    if draw(st.booleans()):
        i = draw(st.integers(0, len(text) - 1))
        text = (
            text[:i]
            + draw(st.sampled_from(["", "(", ")", "[", "]", ",", " ", "x", "1", ".", "_", "\t"]))
            + text[i + 1 :]
        )
    return text


FRAGMENTS = st.sampled_from(["[", "]", "(", ")", ",", " ", "\n", "1", ".", "e", "-", "nan", "2.5", "(1, 2)", "[3, 4]"])
TEXTS = st.one_of(
    span_lists(),
    usual_lists(),
    st.lists(st.one_of(FRAGMENTS, NUMBERS), max_size=30).map("".join),
    st.text(max_size=60),
    st.tuples(
        st.sampled_from(["[(1, 2), ", "(1, 2), ", "[", "(", " ", "[(1, ", "9"]),
        st.integers(1, 3000),
        st.sampled_from(["", "]", "(1, 2)]", ")]"]),
    ).map(lambda t: t[0] * t[1] + t[2]),
)
DURATIONS = st.sampled_from([None, None, 12.0, 0.5, 3.0, 1e7, 0.0, float("inf"), float("nan"), 2])


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXTS)
@example("[(1, 2) (3, 4)]")
@example("[(1, 2)(3, 4),]")
@example("[(1, 2], [3, 4)]")
@example("[(1, 2),, (3, 4)]")
@example(" [ (1 , 2) , ] ")
@example("[(1, 2)] ]")
@example("[2.5]")
@example("[IN(FINITY,)0]")
@example("[(1, 2)5, (3, 4)]")
@example("[(1, 2),5(3, 4)]")
@example("[(1, 2)5]")
@example("[(1, 2)5,]")
@example("[1(2, 3)]")
@example("[(1, 2)x, (3, 4)]")
@example("[(1, 2), (3, 4)x]")
@example("[(1, 2), (3, 4),x]")
@example("[(1, 2),x(3, 4)]")
@example("[1, 2]")
@example("[(1,)]")
@example("[(1, 2),(,)]")
@example("[(1 2, 3)]")
@example("[(1, 2) , (3, 4)]")
@example("[(1_0, 2)]")
@example("[(1, 2, 3), (4)]")
@example("[(1,2;3,4)]")
@example("[((1, 2), (3, 4))]")
@example("[(1, 2),(3, 4]]")
@example("[(1,\t2)]")
@example("[(1, 2),\u3000(3, 4)]")
def test_read_span_list_matches_the_reference(text):
    assert _same(read_span_list(text), _reference_read_span_list(text))


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXTS, DURATIONS)
def test_parse_span_list_matches_the_reference(text, duration):
    assert _same(parse_span_list(text, duration), _reference_parse_span_list(text, duration))


@settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(span_lists(), usual_lists()),
    DURATIONS,
    st.sampled_from(["", "<think>x</think><answer>B</answer>", "<glue>[(1, 2)]</glue>"]),
)
def test_the_glue_block_is_read_as_the_reference_reads_it(glue, duration, before):
    spans, invalid, parsed = _reference_parse_span_list(glue, duration)
    response = f"{before}<glue>{glue}</glue>"
    if "<" in glue or ">" in glue:
        return
    result = parse_response(response, duration)
    assert _same((list(result.spans), result.invalid_spans, result.glue_parsed), (spans, invalid, parsed))
    assert _same(glue_spans(response, duration), tuple(spans))


def test_a_long_well_formed_list_matches_the_reference():
    text = "[" + ", ".join(f"({i % 97}.5, {i % 89 + 1}e0)" if i % 7 else f"[{i}, nan]" for i in range(20000)) + ",]"
    for duration in (None, 40.0):
        assert _same(parse_span_list(text, duration), _reference_parse_span_list(text, duration))
    broken = text[:-30] + "x" + text[-29:]
    assert parse_span_list(broken) == _reference_parse_span_list(broken, None) == ([], 0, False)


SECONDS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([-0.0, 0.0, 1.0, 2.0, 12.0, 1e6, 1e6 + 1])
)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(SECONDS, SECONDS), max_size=12), DURATIONS)
def test_clean_pairs_matches_clean_spans_and_the_reference(pairs, duration):
    spans, reasons = clean_spans(pairs, duration)
    starts, ends = [s for s, _ in pairs], [e for _, e in pairs]
    assert _same(clean_pairs(starts, ends, duration), (spans, len(reasons)))
    assert _same(clean_pairs(starts, ends, duration), _reference_clean(pairs, duration))


_TIME = re.compile(rf"<time>\s*([\(\[])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\)\]])\s*</time>")


def _reference_time_pairs(text):
    """Every ``<time>(a, b)</time>`` once, first-occurrence order (one findall)."""
    return [(float(a), float(b)) for o, a, b, c in dict.fromkeys(_TIME.findall(text)) if _CLOSING[o] == c]


THINK_PIECES = st.one_of(
    st.sampled_from(
        [
            "<time>",
            "</time>",
            "<time>(1, 2)</time>",
            "<time> [3.5,4] </time>",
            "(1, 2)",
            "<",
            "x",
            " ",
            "<time>(1, 2]</time>",
            "<time>(1, 2)</time >",
            "<tim",
            "e>",
            "\n",
        ]
    ),
    NUMBERS,
)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(THINK_PIECES, max_size=25).map("".join))
@example("<time>x<time>(1, 2)</time><time>(1, 2)</time>junk<time>[1, 2]</time><time>(1,2)</time>")
def test_distinct_time_pairs_match_the_reference(text):
    assert _same(tagged_pairs(text, "time", distinct=True), _reference_time_pairs(text))
    long = "x" * 5000 + text  # past the length from which pieces are read
    assert _same(tagged_pairs(long, "time", distinct=True), _reference_time_pairs(long))
