"""The environment: frame times derived by hand from the authors' formulas, every budget, the last round, and
the observation texts byte for byte against the authors' strings (fixtures/videozoomer_prompts.json)."""

import json
from pathlib import Path

import pytest

from zoomzero_plugin.agent import AgentBudget, Trajectory, VideoInfo, get_prompts
from zoomzero_plugin.agent.environment import END_ANSWER, END_LAST_ROUND_CALL, END_NO_ANSWER, END_TOTAL_TOKENS
from zoomzero_plugin.agent.render import QWEN_IMAGE, observation_block

AUTHORS = json.loads((Path(__file__).parent / "fixtures" / "videozoomer_prompts.json").read_text(encoding="utf-8"))


def call(s, e, fps):
    return f'<think>look</think><video_zoom>{{"segment": [{s}, {e}], "fps": {fps}}}</video_zoom>'


ANSWER = "<think>done</think><answer>B</answer>"


def times(frames):
    return [round(f.time, 2) for f in frames]


def test_overview_keeps_every_step_th_frame():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))  # 100 s: step round(30 / 0.5) = 60 -> 50 frames
    assert [f.frame for f in t.overview] == list(range(0, 3000, 60))
    assert times(t.overview)[:3] == [0.0, 2.0, 4.0] and t.overview[-1].time == 98.0
    assert [f.index for f in t.overview] == list(range(50))
    short = Trajectory(VideoInfo("v.mp4", 28, 4.0))  # 7 s at 4 fps: step 8
    assert [f.frame for f in short.overview] == [0, 8, 16, 24]


def test_overview_step_rounds_the_frame_ratio_to_the_nearest_frame():
    """round(), not int(): 29.97 fps at 0.5 fps is a step of round(59.94) = 60 (int would give 59)."""
    t = Trajectory(VideoInfo("v.mp4", 300, 29.97))
    assert [f.frame for f in t.overview] == [0, 60, 120, 180, 240]
    assert [f.frame for f in Trajectory(VideoInfo("v.mp4", 7, 1.75), AgentBudget(overview_fps=1.0)).overview] == [
        0,
        2,
        4,
        6,
    ]  # round(1.75) = 2


def test_exactly_64_candidates_keep_their_steps():
    """The uniform resampling starts above overview_frames: 64 candidates (3840 frames, step 60) stay on the step
    grid; 65 (3900 frames) are resampled by linspace(0, 3899, 64): 0, 61, 123, …"""
    exactly = Trajectory(VideoInfo("v.mp4", 3840, 30.0))
    assert [f.frame for f in exactly.overview] == list(range(0, 3840, 60))
    over = [f.frame for f in Trajectory(VideoInfo("v.mp4", 3900, 30.0)).overview]
    assert len(over) == 64 and over[:3] == [0, 61, 123] and over[-1] == 3899


def test_overview_of_a_long_video_is_64_uniform_frames():
    t = Trajectory(VideoInfo("v.mp4", 18000, 30.0))  # 600 s: 300 candidates > 64
    frames = [f.frame for f in t.overview]
    assert len(frames) == 64 and frames[0] == 0 and frames[-1] == 17999
    assert frames[1] == 285 and frames[32] == 9142  # floor(k * 17999 / 63)
    assert t.overview[1].label == "<frame1_time9.50s>" and t.overview[32].label == "<frame32_time304.73s>"


def test_clip_frames_include_both_ends():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    step = t.step(call(10, 12, 2))  # 4 frames over frames 300..360
    assert [f.frame for f in step.observation.frames] == [300, 320, 340, 360]
    assert [f.label for f in step.observation.frames] == [
        "<frame0_time10.00s>",
        "<frame1_time10.67s>",
        "<frame2_time11.33s>",
        "<frame3_time12.00s>",
    ]
    assert t.calls == 1 and t.images == 54 and t.clip_frames == 4


def test_clips_are_clamped_to_the_video():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    before = t.step(call(-2, 1, 2))  # 6 frames; start clamped to frame 0
    assert [f.frame for f in before.observation.frames] == [0, 6, 12, 18, 24, 30]
    past = t.step(call(95, 103, 1))  # 8 frames; end clamped to the last frame (2999)
    assert [f.frame for f in past.observation.frames] == [2850, 2871, 2892, 2913, 2935, 2956, 2977, 2999]


@pytest.mark.parametrize(
    "s, e, code",
    [(120, 125, "outside_video"), (100, 101, "outside_video"), (-5, -1, "outside_video"), (-5, 0, "outside_video")],
)
def test_segments_wholly_outside_the_video_are_errors(s, e, code):
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    step = t.step(call(s, e, 1))
    assert step.error.code == code and step.end is None and t.errors == 1 and t.calls == 0
    assert "lies outside the video (0 to 100.00 seconds)" in step.observation.text()


def execution_observation(message):
    """The authors' execution-error turn (not their parse-error one) around ``message``."""
    return AUTHORS["rollout"]["execution_error"].replace("{e}", message) + AUTHORS["rollout"]["analyze"]


def test_call_and_image_budgets():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0), AgentBudget(max_calls=1))
    assert t.step(call(1, 2, 2)).error is None
    refused = t.step(call(3, 4, 2))  # the one call is used: the budget turn, not the parse-error one
    assert refused.error.code == "call_budget" and refused.error.kind == "execution"
    assert refused.observation.text() == execution_observation("all 1 calls are used; answer with the frames above")
    assert t.calls == 1 and t.images == 52 and t.errors == 1  # 50 overview + 2 clip frames
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0), AgentBudget(max_images=70))  # overview 50
    assert t.step(call(0, 8, 2)).error is None  # 66 images
    step = t.step(call(10, 12, 2))  # 4 more: 70, exactly the limit
    assert step.error is None and t.images == 70
    over = t.step(call(20, 20.5, 2))  # 1 more
    assert over.error.code == "image_budget" and over.error.kind == "execution" and t.images == 70 and t.errors == 1
    assert over.observation.text() == execution_observation(
        "the clip's 1 frames exceed the 0 frames left of the 70 a conversation may hold"
    )


def test_the_last_round():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))  # 5 rounds
    for k in range(3):
        assert not t.step(call(k, k + 1, 2)).observation.last_round
    fourth = t.step(call(5, 6, 2))
    assert fourth.observation.last_round
    assert fourth.observation.text().endswith(AUTHORS["rollout"]["clip_suffix"] + AUTHORS["rollout"]["last_round"])
    fifth = t.step(call(7, 8, 2))
    assert fifth.end == END_LAST_ROUND_CALL and fifth.observation is None and fifth.error.code == "last_round_call"
    assert t.done and t.calls == 4 and t.errors == 1
    with pytest.raises(RuntimeError):
        t.step(ANSWER)
    two = Trajectory(VideoInfo("v.mp4", 3000, 30.0), AgentBudget(max_assistant_turns=2))
    assert two.step(call(1, 2, 2)).observation.last_round
    one = Trajectory(VideoInfo("v.mp4", 3000, 30.0), AgentBudget(max_assistant_turns=1))
    assert one.step(call(1, 2, 2)).end == END_LAST_ROUND_CALL


def test_error_turn_in_the_fourth_round_carries_the_note():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    for k in range(3):
        t.step(call(k, k + 1, 2))
    step = t.step(call(1, 30, 2))
    expected = (
        AUTHORS["rollout"]["execution_error"].replace("{e}", step.error.message)
        + AUTHORS["rollout"]["analyze"]
        + AUTHORS["rollout"]["last_round"]
    )
    assert step.observation.text() == expected


def test_ends():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    assert t.step(ANSWER).end == END_ANSWER and t.end == END_ANSWER
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    assert t.step("<think>no idea</think>").end == END_NO_ANSWER
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    assert t.max_new_tokens(1000) == 4096
    assert t.max_new_tokens(1000 + 30000) == 2768
    assert t.max_new_tokens(1000 + 32768) == 0
    t.stop(END_TOTAL_TOKENS)
    assert t.done and t.end == END_TOTAL_TOKENS
    with pytest.raises(ValueError):
        t.stop("bored")


def test_a_stop_after_the_end_keeps_the_end():
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    t.step(ANSWER)
    t.stop(END_TOTAL_TOKENS)  # the caller's budget check after the last turn: the answer stands
    assert t.end == END_ANSWER


@pytest.mark.parametrize(
    "text, end",
    [
        ("<think>still thinking", END_TOTAL_TOKENS),  # neither call nor answer, cut: the budget ended it
        (call(1, 2, 2)[:-5], END_TOTAL_TOKENS),  # a call cut before its closing tag
        (ANSWER, END_ANSWER),  # an answer that still fits counts
    ],
)
def test_a_cut_turn_ends_at_the_budget_unless_it_answered(text, end):
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    assert t.step(text, cut=True).end == end and t.end == end


def test_a_withheld_observation_no_longer_counts():
    """A host that cannot fit an observation into the response withholds it: the counts go back to what the
    conversation shows. 100 s at 0.5 fps: 50 overview frames; a 2-fps call over [10, 12] shows 2 s × 2 = 4 frames,
    over [20, 23] 3 s × 2 = 6."""
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    t.step(call(10, 12, 2))
    assert (t.calls, t.images, t.clip_frames) == (1, 54, 4)
    t.step(call(20, 23, 2))
    assert (t.calls, t.images, t.clip_frames) == (2, 60, 10)
    t.withhold()  # the second clip did not fit: as if only the first was shown
    assert (t.calls, t.images, t.clip_frames, t.errors) == (1, 54, 4, 0)
    assert t.end == END_TOTAL_TOKENS and t.steps[-1].observation is None and t.steps[-1].end == END_TOTAL_TOKENS
    assert len(t.steps) == 2 and t.steps[0].observation is not None  # the turn stays; the shown clip too
    with pytest.raises(RuntimeError, match="no observation"):
        t.withhold()
    errors = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    errors.step(call(200, 210, 2))  # outside the 100-s video: an error text
    assert errors.errors == 1
    errors.withhold()
    assert (errors.errors, errors.calls, errors.clip_frames) == (0, 0, 0) and errors.end == END_TOTAL_TOKENS
    answered = Trajectory(VideoInfo("v.mp4", 3000, 30.0))
    answered.step(ANSWER)
    with pytest.raises(RuntimeError, match="no observation"):
        answered.withhold()


@pytest.mark.parametrize("variant", ["train", "eval"])
def test_observations_are_the_authors_strings(variant):
    a = AUTHORS["rollout"]
    t = Trajectory(VideoInfo("v.mp4", 3000, 30.0), prompts=get_prompts(variant))
    clip = t.step(call(10, 12, 2)).observation
    frames = "".join(f"<frame{i}_time{s}s>{QWEN_IMAGE}" for i, s in enumerate(["10.00", "10.67", "11.33", "12.00"]))
    assert observation_block(clip.text(QWEN_IMAGE)) == (a["clip_prefix"] + frames + a["clip_suffix"] + a["turn_end"])
    parse = t.step('<think>x</think><video_zoom>{"segment": [1, 2]}</video_zoom>')
    assert parse.error.kind == "parse"
    assert parse.observation.text() == a["parse_error"].replace("{error_info}", parse.error.message) + a["analyze"]
    run = t.step(call(1, 30, 2))
    assert run.observation.text() == (
        a["execution_error"].replace("{e}", "Number of frames extracted (58) exceeds the maximum allowed (16).")
        + a["analyze"]
    )


@pytest.mark.parametrize("variant", ["train", "eval", "sft"])
def test_system_prompts_are_the_authors(variant):
    assert get_prompts(variant).system == AUTHORS["system"][variant]


def test_system_prompt_details_the_checkpoint_learned():
    assert "in this round. \\n Example usage" in get_prompts("train").system  # a backslash and an n
    assert "\n" not in get_prompts("train").system
    assert "in \\\\boxed{{}} inside <answer>" in get_prompts("eval").system
    assert "cannot exceed {} (e.g." in get_prompts("sft").system and "\n\nIf the initial" in get_prompts("sft").system
    with pytest.raises(ValueError, match="unknown agent prompt variant"):
        get_prompts("chat")


def test_first_user_turn_replaces_the_video_placeholder():
    t = Trajectory(VideoInfo("v.mp4", 8, 4.0))  # 2 s: frames 0 only (step 8)
    parts = t.user_parts("<video>Question: what?")
    assert [p if isinstance(p, str) else p.label for p in parts] == ["<frame0_time0.00s>", "Question: what?"]
    assert t.user_parts("no placeholder")[-1] == "no placeholder"


@pytest.mark.parametrize(
    "bad",
    [
        dict(max_assistant_turns=0),
        dict(max_frames_per_call=0),
        dict(overview_fps=0.0),
        dict(max_calls=-1),
        dict(max_overview_frames=200),
        dict(min_frame_pixels=10**6),
        dict(max_new_tokens=10**6),
        dict(max_images=True),
        dict(overview_fps=float("nan")),
    ],
)
def test_budget_validation_names_the_field(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        AgentBudget(**bad)


def test_budgets_may_equal_their_bounds():
    """Each cross-field bound is <=: an overview as large as the image budget, one turn as long as the whole
    response, one pixel limit for both; calls may be 0 (the no-tool baseline)."""
    AgentBudget(max_overview_frames=128, max_images=128)
    AgentBudget(max_new_tokens=32768, max_response_tokens=32768)
    AgentBudget(min_frame_pixels=100352, max_frame_pixels=100352)
    AgentBudget(max_calls=0)
    for bad in (
        dict(max_overview_frames=129, max_images=128),
        dict(max_new_tokens=32769, max_response_tokens=32768),
        dict(min_frame_pixels=100353, max_frame_pixels=100352),
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            AgentBudget(**bad)


def test_budget_round_trips_through_a_recipe_section_whose_other_keys_it_leaves():
    b = AgentBudget(max_calls=2, max_assistant_turns=3)
    assert AgentBudget.from_section({**b.to_dict(), "prompt": "train"}, "agent") == b
    with pytest.raises(ValueError, match=r"^agent\.max_calls: 'two' is not a valid int$"):
        AgentBudget.from_section({"max_calls": "two"}, "agent")


def test_a_video_needs_frames():
    with pytest.raises(ValueError):
        VideoInfo("v.mp4", 0, 30.0)
