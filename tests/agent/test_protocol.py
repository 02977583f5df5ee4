"""The tool protocol: hand-made turns, every threshold of a call, and fuzzing (totality, linear time)."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zoomzero_plugin.agent.protocol import ANSWER, CALL, NONE, Call, cut_turn, parse_turn, read_call
from zoomzero_plugin.answers import boxed_letter


def call(segment, fps, think="<think>I should look closer.</think>"):
    return f'{think}<video_zoom>{{"segment": {json.dumps(segment)}, "fps": {json.dumps(fps)}}}</video_zoom>'


def test_a_well_formed_call():
    t = parse_turn(call([10.0, 12.0], 2))
    assert t.kind == CALL and t.format_ok and t.error is None
    assert (t.call.start, t.call.end, t.call.fps, t.call.frames) == (10.0, 12.0, 2.0, 4)


def test_the_turn_stops_at_the_first_closing_tag():
    text = call([1, 2], 4) + " more words <answer>A</answer>"
    t = parse_turn(text)
    assert t.kind == CALL and t.text == call([1, 2], 4) and t.format_ok
    assert cut_turn("no call here") == "no call here"


def test_frames_are_counted_as_the_authors_do():
    # int(fps * (end - start)) in float arithmetic: 16.9 -> 16 is allowed, 17 is one too many
    assert Call(0.0, 1.0, 16.9).frames == 16
    assert parse_turn(call([0, 1], 16.9)).format_ok
    t = parse_turn(call([0, 1], 17))
    assert t.error.code == "too_many_frames"
    assert t.error.message == "Number of frames extracted (17) exceeds the maximum allowed (16)."
    assert parse_turn(call([0, 8], 2)).format_ok  # exactly 16
    assert parse_turn(call([0, 8], 2), max_frames_per_call=15).error.code == "too_many_frames"
    assert Call(0.0, 0.3, 1.0).frames == 0 and parse_turn(call([0, 0.3], 1)).error.code == "no_frames"


@pytest.mark.parametrize(
    "segment, fps, code",
    [
        ([5, 3], 2, "reversed_segment"),
        ([5, 5], 2, "reversed_segment"),
        ([1, 2], 0, "fps_not_positive"),
        ([1, 2], -2, "fps_not_positive"),
        (["nan", 2], 1, "not_finite"),
        ([1, "inf"], 1, "not_finite"),
        ([1, 2], "1e999", "not_finite"),
    ],
)
def test_values_that_never_run(segment, fps, code):
    t = parse_turn(call(segment, fps))
    assert t.kind == CALL and t.call is not None and t.error.code == code and t.error.kind == "execution"
    assert f"call:{code}" in t.problems and not t.format_ok


@pytest.mark.parametrize(
    "content, code",
    [
        ('{"segment": [1, 2], "fps": 2', "not_json"),
        ("look at 1 to 2 seconds", "not_json"),
        ('please {"segment": [1, 2], "fps": 2}', "not_json"),  # prose around the object
        ('{"segment": [1, 2], "fps": 2} {"segment": [3, 4], "fps": 2}', "not_json"),
        ("[1, 2]", "not_json"),
        ('{"segment": [1, 2]}', "bad_arguments"),
        ('{"fps": 2}', "bad_arguments"),
        ('{"segment": [1, 2, 3], "fps": 2}', "bad_arguments"),
        ('{"segment": "1-2", "fps": 2}', "bad_arguments"),
        ('{"segment": [1, "two"], "fps": 2}', "bad_arguments"),
        ('{"segment": [true, 2], "fps": 2}', "bad_arguments"),
        ('{"segment": [1, 2], "fps": null}', "bad_arguments"),
    ],
)
def test_unreadable_calls(content, code):
    t = parse_turn(f"<think>x</think><video_zoom>{content}</video_zoom>")
    assert t.kind == CALL and t.call is None and t.error.code == code and t.error.kind == "parse"


def test_readable_forms_the_authors_accept():
    pretty = '<think>x</think><video_zoom>\n{\n  "segment": [4.0, 6.0],\n  "fps": 2\n}\n</video_zoom>'
    assert parse_turn(pretty).format_ok
    strings = parse_turn(call(["4", "6.5"], "2"))
    assert strings.call == Call(4.0, 6.5, 2.0) and strings.format_ok
    extra = parse_turn('<think>x</think><video_zoom>{"segment": [1, 3], "fps": 1, "why": "x"}</video_zoom>')
    assert extra.call == Call(1.0, 3.0, 1.0)
    assert read_call(' {"segment": [1, 2], "fps": 3} ') == Call(1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    "text, problem",
    [
        ('<video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>', "no_think"),
        ('<think>x<video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom></think>', "think_not_closed"),
        (
            '<think>x</think><answer>A</answer><video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>',
            "answer_in_call_turn",
        ),
        ('<think>x</think><video_zoom>a<video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>', "call_tags"),
        ('<think>x</think>{"segment": [1, 2], "fps": 2}</video_zoom>', "call_tags"),
    ],
)
def test_call_turn_format(text, problem):
    t = parse_turn(text)
    assert t.kind == CALL and problem in t.problems and not t.format_ok


def test_answer_turns():
    t = parse_turn("<think>the red one</think><answer>B</answer>")
    assert t.kind == ANSWER and t.letter == "B" and t.format_ok
    assert parse_turn("\n<think>a</think>\n<answer> (C) </answer>\n\n").format_ok  # whitespace around is fine
    assert parse_turn("<think>a</think><answer>B</answer> because").problems == ("text_after_answer",)
    assert "answer_tags" in parse_turn("<think>a</think><answer>B</answer><answer>C</answer>").problems
    assert "no_think" in parse_turn("<answer>B</answer>").problems
    assert parse_turn("<think>a</think><answer>A</answer><answer>D</answer>").letter == "D"  # the last one
    # exactly one of each tag, counted both ways: a second closing tag alone breaks the format too
    assert parse_turn("<think>a</think><answer>B</answer></answer>").problems == ("answer_tags",)
    assert parse_turn("<think>a</think><answer><answer>B</answer>").problems == ("answer_tags",)


def test_a_call_is_one_object_from_its_first_to_its_last_character():
    """Prose after the object (or before it) is not one JSON object: said in this package's words."""
    for content in ('{"segment": [1, 2], "fps": 2} then more', 'see {"segment": [1, 2], "fps": 2}'):
        error = read_call(content)
        assert error.code == "not_json" and error.message.startswith("the call must hold exactly one JSON object")


@pytest.mark.parametrize(
    "content, letter",
    [
        ("B", "B"),
        ("(B)", "B"),
        ("B. the red square", "B"),
        ("b", "B"),
        ("\\boxed{C}", "C"),
        ("\\\\boxed{{C}}", "C"),
        ("The answer is \\boxed{(D)}.", "D"),
        ("\\boxed{", None),
        ("red", None),
        ("The answer is B.", None),
        ("", None),
    ],
)
def test_answer_letters(content, letter):
    assert boxed_letter(content) == letter


def test_turns_that_end_the_trajectory():
    assert parse_turn("<think>hmm</think> I am not sure.").kind == NONE
    truncated = parse_turn('<think>x</think><video_zoom>{"segment": [1, 2]')
    assert truncated.kind == NONE and truncated.problems == ("unterminated_call",)
    for value in (None, b"\xff<answer>A</answer>", 3.5, ""):
        assert parse_turn(value).kind in (ANSWER, NONE)


FRAGMENTS = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<answer>",
        "</answer>",
        "<video_zoom>",
        "</video_zoom>",
        "{",
        "}",
        "[",
        "]",
        '"segment"',
        '"fps"',
        ":",
        ",",
        " ",
        "\n",
        "A",
        "B",
        "\\boxed{",
        "nan",
        "1e999",
        "-",
        "1",
        "2.5",
        '"3"',
        "true",
        "null",
        '{"segment": [1, 2], "fps": 2}',
        "<tool_response>",
        "<|im_end|>",
    ]
)
TURNS = st.one_of(st.lists(st.one_of(FRAGMENTS, st.text(max_size=6)), max_size=40).map("".join), st.text(max_size=300))


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(TURNS, st.integers(1, 64))
def test_parser_is_total_and_consistent(text, max_frames):
    t = parse_turn(text, max_frames)
    assert t.kind in (CALL, ANSWER, NONE)
    assert text.startswith(t.text) and t.text.count("</video_zoom>") <= 1
    if t.kind == CALL:
        assert t.text.endswith("</video_zoom>") and (t.call is not None or t.error is not None)
        if t.error is None:
            assert math.isfinite(t.call.fps) and t.call.fps > 0 and t.call.end > t.call.start
            assert 1 <= t.call.frames <= max_frames
    if t.format_ok:
        assert t.kind != NONE and t.text.lstrip().startswith("<think>")
    assert t.letter is None or (len(t.letter) == 1 and t.letter.isupper())


@pytest.mark.parametrize(
    "text",
    [
        "<video_zoom>" * 100_000,
        "<think>" + "a" * 1_000_000 + "</think><answer>B</answer>",
        "<think>x</think><video_zoom>" + "[" * 200_000 + "</video_zoom>",  # deep nesting: no RecursionError escapes
        '<think>x</think><video_zoom>{"segment": [' + "9" * 600_000 + ', 2], "fps": 2}</video_zoom>',
        "<answer>" * 50_000 + "</answer>" * 50_000,
        "{" * 300_000 + "</video_zoom>",
        "\\boxed{" * 100_000,
    ],
)
def test_one_megabyte_pathologies(text):
    # linear scans read these in milliseconds (benchmarks/bench_agent.py measures it); a quadratic one would not end
    assert parse_turn(text).kind in (CALL, ANSWER, NONE)
