"""What the model reads when a call cannot be read: the release's error text, shape by shape.

The authors' rollout (zsgvivo/VideoZoomer @ 5638153, ``vllm_async_engine.process_tool_call`` and
``function_tools.prepare_tool_call_inputs_video``) takes the call content, finds ``\\{.*?\\}`` spans (not across
newlines), ``json.loads`` each, asserts there is exactly one object, then ``float()``s ``obj['segment'][0]``,
``obj['segment'][1]`` and ``obj['fps']``; any exception becomes ``Error Information: {str(e)}.``, a failure of the
``float()`` step wrapped as ``Invalid input for function `extract_video_clip`. Error: {e}, input: {obj}``.

The expected texts below were worked out by hand from that code and Python 3.11's messages (the release's
Python: its README creates ``python=3.11``): json's ``Expecting property name enclosed in double quotes`` with the
1-based column and 0-based char of the failure, ``str(KeyError('segment'))`` = ``'segment'`` with its quotes,
``'NoneType' object is not subscriptable``, ``list index out of range``, ``could not convert string to float:
'high'``, the object printed as a Python dict; an ``AssertionError`` has an empty text.
"""

import re
import sys

import pytest
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.agent import AgentBudget, Trajectory, VideoInfo
from zoomzero_plugin.agent.protocol import CALL, PARSE, braced_spans, parse_turn, release_message

from ..helpers import within_seconds

INVALID = "Invalid input for function `extract_video_clip`. Error: "


def error_of(content: str):
    t = parse_turn(f"<think>x</think><video_zoom>{content}</video_zoom>")
    assert t.kind == CALL and t.call is None and t.error is not None and t.error.kind == PARSE
    return t.error


SHAPES = [
    # invalid JSON: json.loads' own message, positions inside the {...} span
    (
        "single quotes",
        "{'segment': [1, 2], 'fps': 2}",
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    ),
    (
        "single quotes after a good key",
        "{\"segment\": [1, 2], 'fps': 2}",
        "Expecting property name enclosed in double quotes: line 1 column 21 (char 20)",
    ),
    (
        "unquoted key",
        "{segment: [1, 2], fps: 2}",
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    ),
    (
        "a nested object ends the span at its first }",
        '{"segment": {"start": 1, "end": 2}, "fps": 2}',
        "Expecting ',' delimiter: line 1 column 35 (char 34)",
    ),
    ("a word as a bare value", '{"segment": [1, 2], "fps": two}', "Expecting value: line 1 column 28 (char 27)"),
    # key lookups
    ("missing segment", '{"fps": 2}', INVALID + "'segment', input: {'fps': 2}"),
    ("missing fps", '{"segment": [1, 2]}', INVALID + "'fps', input: {'segment': [1, 2]}"),
    ("an empty object", "{}", INVALID + "'segment', input: {}"),
    ("a misspelt key", '{"segments": [1, 2], "fps": 2}', INVALID + "'segment', input: {'segments': [1, 2], 'fps': 2}"),
    # keys present but null
    (
        "segment null",
        '{"segment": null, "fps": 2}',
        INVALID + "'NoneType' object is not subscriptable, input: {'segment': None, 'fps': 2}",
    ),
    (
        "fps null",
        '{"segment": [1, 2], "fps": null}',
        INVALID + "float() argument must be a string or a real number, not 'NoneType', input: {'segment': [1, 2], "
        "'fps': None}",
    ),
    (
        "a null segment value",
        '{"segment": [null, 2], "fps": 2}',
        INVALID + "float() argument must be a string or a real number, not 'NoneType', input: {'segment': [None, 2], "
        "'fps': 2}",
    ),
    # non-numeric values
    (
        "fps a word",
        '{"segment": [1, 2], "fps": "high"}',
        INVALID + "could not convert string to float: 'high', input: {'segment': [1, 2], 'fps': 'high'}",
    ),
    (
        "segment in mm:ss",
        '{"segment": ["00:10", "00:12"], "fps": 2}',
        INVALID + "could not convert string to float: '00:10', input: {'segment': ['00:10', '00:12'], 'fps': 2}",
    ),
    (
        "the end a word",
        '{"segment": [1, "two"], "fps": 2}',
        INVALID + "could not convert string to float: 'two', input: {'segment': [1, 'two'], 'fps': 2}",
    ),
    (
        "segment a dashed string",
        '{"segment": "1-2", "fps": 2}',
        INVALID + "could not convert string to float: '-', input: {'segment': '1-2', 'fps': 2}",
    ),
    (
        "fps a list",
        '{"segment": [1.50, 2], "fps": [2]}',
        INVALID + "float() argument must be a string or a real number, not 'list', input: {'segment': [1.5, 2], "
        "'fps': [2]}",
    ),
    # scalar or short segments
    (
        "scalar segment",
        '{"segment": 5, "fps": 2}',
        INVALID + "'int' object is not subscriptable, input: {'segment': 5, 'fps': 2}",
    ),
    (
        "a float segment",
        '{"segment": 5.5, "fps": 2}',
        INVALID + "'float' object is not subscriptable, input: {'segment': 5.5, 'fps': 2}",
    ),
    (
        "one-element segment",
        '{"segment": [5], "fps": 2}',
        INVALID + "list index out of range, input: {'segment': [5], 'fps': 2}",
    ),
    (
        "empty segment",
        '{"segment": [], "fps": 2}',
        INVALID + "list index out of range, input: {'segment': [], 'fps': 2}",
    ),
    # not exactly one object: the bare assertion, an empty text
    ("two JSON objects in one tag", '{"segment": [1, 2], "fps": 2} {"segment": [3, 4], "fps": 2}', ""),
    ("an empty tag", "", ""),
    ("whitespace only", "  \n ", ""),
    ("prose without braces", "look at 1 to 2 seconds", ""),
    ("a JSON array", "[1, 2]", ""),
    ("an unclosed object", '{"segment": [1, 2], "fps": 2', ""),
    ("a pretty-printed object that is also malformed", "{\n'segment': [1, 2],\n'fps': 2\n}", ""),
    # the first failing span speaks, before the count is checked
    (
        "two objects, the second malformed",
        '{"segment": [1, 2], "fps": 2} {fps: 1}',
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    ),
]


@pytest.mark.parametrize("shape, content, expected", SHAPES, ids=[s[0] for s in SHAPES])
def test_the_observation_holds_the_releases_text(shape, content, expected):
    assert error_of(content).message == expected


def test_a_trailing_comma_reads_as_pythons_json_words_it():
    # Python 3.11/3.12 (the release's): the comma is read as the start of another key; 3.13 words it anew
    expected = (
        "Illegal trailing comma before end of object: line 1 column 29 (char 28)"
        if sys.version_info >= (3, 13)
        else "Expecting property name enclosed in double quotes: line 1 column 30 (char 29)"
    )
    assert error_of('{"segment": [1, 2], "fps": 2,}').message == expected


def test_the_whole_observation_is_the_releases():
    budget = AgentBudget()
    traj = Trajectory(VideoInfo("v.mp4", 600, 30.0), budget)
    step = traj.step("<think>x</think><video_zoom></video_zoom>")
    assert step.observation.text() == (
        "<tool_response>\nERROR occurs during the function tool call. Error Information: .\n</tool_response>\n"
        "Please analyze the error information obtained from the function tool and adjust your response. "
        "Countinue your reasoning process inside <think> and </think>."
    )
    step = traj.step('<think>x</think><video_zoom>{"fps": 2}</video_zoom>')
    assert step.observation.text() == (
        "<tool_response>\nERROR occurs during the function tool call. Error Information: Invalid input for function "
        "`extract_video_clip`. Error: 'segment', input: {'fps': 2}.\n</tool_response>\nPlease analyze the error "
        "information obtained from the function tool and adjust your response. Countinue your reasoning process "
        "inside <think> and </think>."
    )


def test_this_packages_words_stay_as_a_note():
    error = error_of("")
    assert error.code == "not_json" and error.message == "" and "one JSON object" in error.note
    assert error.explanation == error.note and error.to_dict()["note"] == error.note


@pytest.mark.parametrize(
    "content, code",
    [
        ('please {"segment": [1, 2], "fps": 2}', "not_json"),  # prose around the object runs in the release
        ('{"segment": [1, 2], "fps": 2} thanks', "not_json"),
        ('[{"segment": [1, 2], "fps": 2}]', "not_json"),
        ('{"segment": [1, 2, 3], "fps": 2}', "bad_arguments"),  # a third value: the release reads the first two
        ('{"segment": "12", "fps": 2}', "bad_arguments"),  # a string: the release reads "1" and "2"
        ('{"segment": [true, 2], "fps": 2}', "bad_arguments"),  # float(True) == 1.0 in the release
        ('{"segment": [1, 2], "fps": false}', "bad_arguments"),
    ],
)
def test_calls_the_release_runs_keep_this_packages_words(content, code):
    error = error_of(content)
    assert error.code == code and error.note is None
    assert release_message(content) is None


def test_several_tags_read_the_content_from_the_first_opening_tag():
    # the release's content runs from the first <video_zoom> to </video_zoom>: here it holds one object, so the
    # release runs the call and this package's words stay; with two objects the release's empty text shows
    t = parse_turn('<think>x</think><video_zoom>a<video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>')
    assert t.error.code == "several_calls" and t.error.message == "one turn may hold one <video_zoom> call"
    t = parse_turn('<think>x</think><video_zoom>{"fps": 1}<video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>')
    assert t.error.code == "several_calls" and t.error.message == ""


def test_a_call_without_an_opening_tag_keeps_this_packages_words():
    # the release sees no call at all there (the trajectory ends), so it has no text to show
    t = parse_turn('<think>x</think>{"fps": 2}</video_zoom>')
    assert t.error.code == "no_open_tag" and t.error.message == "the call has </video_zoom> but no <video_zoom>"


def test_readable_calls_and_value_errors_are_untouched():
    assert parse_turn('<think>x</think><video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>').error is None
    reversed_ = parse_turn('<think>x</think><video_zoom>{"segment": [5, 3], "fps": 2}</video_zoom>').error
    assert reversed_.code == "reversed_segment" and reversed_.kind == "execution" and reversed_.note is None


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet='{}\n ab"', max_size=60))
def test_braced_spans_are_the_releases_regex(content):
    assert braced_spans(content) == re.findall(r"\{.*?\}", content)


@pytest.mark.parametrize(
    "content",
    ["{\n" * 400_000, "{" * 800_000 + "}", "{" * 400_000 + "\n}" * 200_000, "{}" * 300_000, '{"a": "' + "x" * 800_000],
)
def test_one_megabyte_contents(content):
    # linear scans read these in well under a second; a quadratic one (the regex itself on "{" * n
    # without a "}") would not end
    with within_seconds(60):
        assert release_message(content) is not None
