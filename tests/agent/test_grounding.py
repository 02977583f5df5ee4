"""What TokenAdv over turns reads from a trajectory: the grounding reward and the tool-call character ranges."""

import pytest
from hypothesis import given, strategies as st

from zoomzero_plugin.agent import AgentRewardConfig, Trajectory, VideoInfo, score_response
from zoomzero_plugin.agent.protocol import CALL, NONE, call_char_ranges, parse_turn, turn_call_ranges

from ..helpers import played

VIDEO = VideoInfo("v.mp4", 3000, 30.0)  # 100 s


def call(s, e, fps=2):
    return f'<think>look</think><video_zoom>{{"segment": [{s}, {e}], "fps": {fps}}}</video_zoom>'


ANSWER = "<think>so</think><answer>B</answer>"


def play(turns):
    return played(Trajectory(VIDEO), turns)


def test_grounding_is_the_iou_of_the_looked_at_segments_with_the_truth():
    # calls that returned frames: [10, 14] and [20, 22]; a third asks 40 frames (an error: not looked at)
    response = play([call(10, 14), call(20, 22), call(30, 50), ANSWER])
    s = score_response(response, "B", spans=[(12.0, 21.0)], duration=100.0)
    # union of looked-at: [10,14] ∪ [20,22] = 6 s; truth 9 s; overlap [12,14] + [20,21] = 3 s; IoU = 3 / (6 + 9 - 3)
    assert s["grounding"] == pytest.approx(3 / 12) and s["has_spans"] == 1.0
    assert (s["calls"], s["call_errors"]) == (2.0, 1.0)


def test_a_call_is_on_the_evidence_from_an_iou_of_one_half():
    """Truth [4.5, 7.5] (3 s). [4.5, 10.5]: overlap 3 s, union 6 s, IoU exactly 0.5 — on the evidence; [4.5, 10.6]:
    3 / 6.1 < 0.5 — not; [4, 8]: 3 / 4; [0, 4]: 0; a call that errs (40 frames) is not a look at all."""
    truth = [(4.5, 7.5)]
    count = lambda turns: score_response(play([*turns, ANSWER]), "B", spans=truth, duration=100.0)["evidence_calls"]  # noqa: E731
    assert count([call(4.5, 10.5)]) == 1.0 and count([call(4.5, 10.6)]) == 0.0
    assert count([call(4, 8), call(0, 4), call(4, 24)]) == 1.0, "[4, 24] asks 40 frames: an error, no frames"
    assert count([call(4, 8), call(5, 7.5)]) == 2.0, "[5, 7.5]: 2.5 / 3"
    assert score_response(play([call(4, 8), ANSWER]), "B")["evidence_calls"] == 0.0, "no spans, no evidence"


def test_grounding_clamps_segments_to_the_video_and_is_zero_without_calls():
    s = score_response(play([call(96, 104), ANSWER]), "B", spans=[(98.0, 100.0)], duration=100.0)
    assert s["grounding"] == pytest.approx(2 / 4)  # [96, 100] after clamping vs [98, 100]
    assert score_response(play([ANSWER]), "B", spans=[(1.0, 2.0)], duration=100.0)["grounding"] == 0.0


def test_without_spans_grounding_is_the_tool_term():
    right = score_response(play([call(10, 14), ANSWER]), "B", AgentRewardConfig(tool=0.0))
    wrong = score_response(play([call(10, 14), ANSWER]), "C")
    assert (right["grounding"], right["tool"], right["has_spans"]) == (1.0, 1.0, 0.0)
    assert (wrong["grounding"], wrong["tool"]) == (0.0, 0.0)
    assert right["overall"] == pytest.approx(1.0), "grounding is logged and read by TokenAdv, never paid in overall"


def test_call_char_ranges():
    text = 'a<video_zoom>{"x": 1}</video_zoom>b<video_zoom>open'
    ranges = call_char_ranges(text)
    assert [text[lo:hi] for lo, hi in ranges] == ['<video_zoom>{"x": 1}</video_zoom>', "<video_zoom>open"]
    assert call_char_ranges("no call") == [] and call_char_ranges("</video_zoom>") == []


@given(st.lists(st.sampled_from(["<video_zoom>", "</video_zoom>", "x", "<", ">", "/"]), max_size=60).map("".join))
def test_call_char_ranges_are_ordered_disjoint_and_open_with_the_tag(text):
    ranges = call_char_ranges(text)
    assert all(text.startswith("<video_zoom>", lo) for lo, _ in ranges)
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(text[lo:hi].endswith("</video_zoom>") or hi == len(text) for lo, hi in ranges)


@given(
    st.lists(st.sampled_from(["<video_zoom>", "</video_zoom>", "<answer>", "</answer>", "x", "<"]), max_size=30).map(
        "".join
    )
)
def test_turn_call_ranges_agree_with_the_turn_parser(text):
    """A turn has call tokens iff the protocol reads it as a call (with its opening tag) or as a call cut short
    (neither call nor answer, ``<video_zoom>`` open); an answer turn has none."""
    turn = parse_turn(text, 16)
    ranges = turn_call_ranges(text)
    is_call = "<video_zoom>" in turn.text and turn.kind in (CALL, NONE)  # NONE: cut inside the call
    assert bool(ranges) == is_call
    assert all(text.startswith("<video_zoom>", lo) for lo, _ in ranges)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("<video_zoom>" * 90_000, 1),  # the first open runs to the end
        ("<video_zoom></video_zoom>" * 40_000, 40_000),
        ("<" * 1_000_000, 0),
    ],
)
def test_call_char_ranges_on_degenerate_megabyte_inputs(text, count):
    # a linear scan reads these in milliseconds; a quadratic one would not end
    assert len(call_char_ranges(text)) == count
