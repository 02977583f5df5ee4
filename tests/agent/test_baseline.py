"""The no-tool baseline's setting, prompt and answer reading, against ``scripts/eval_video_notool.sh`` (zsgvivo/
VideoZoomer @ 5638153): ``data.system_prompt="You are a helpful assistant."``, ``data.video_fps=0.2``,
``data.frames_upbound=120``, ``data.max_pixels=100352``, ``data.min_pixels=12544``,
``data.max_response_length=2048``, ``data.pass_video_as_frames=False``, ``rollout.tool_call=null``."""

import pytest

from zoomzero_plugin.agent import VideoInfo
from zoomzero_plugin.agent.baseline import (
    NO_TOOL_BUDGET,
    NO_TOOL_SYSTEM,
    no_tool_prompt,
    no_tool_transcript,
    reply_letter,
    video_frames,
)
from zoomzero_plugin.agent.transcript import Transcript


def test_the_setting_is_the_scripts():
    b = NO_TOOL_BUDGET
    assert (b.overview_fps, b.max_overview_frames, b.max_frame_pixels, b.min_frame_pixels) == (0.2, 120, 100352, 12544)
    assert (b.max_new_tokens, b.max_assistant_turns, b.max_calls) == (2048, 1, 0)
    assert NO_TOOL_SYSTEM == "You are a helpful assistant."


def test_frames_follow_the_authors_sampler_at_a_fifth_of_a_frame_per_second():
    # 30 fps: every round(30 / 0.2) = 150th frame; a 60-s video -> 0, 150, ... 1650 (12 frames, 0..55 s)
    frames = video_frames(VideoInfo("v.mp4", 1800, 30.0))
    assert [f.frame for f in frames] == list(range(0, 1800, 150)) and frames[-1].time == 55.0
    # an hour: 720 candidates > 120 -> 120 frames by linspace(0, 107999, 120) (int): 0, 907, 1815, ... 107999
    long = video_frames(VideoInfo("v.mp4", 108000, 30.0))
    assert len(long) == 120 and [f.frame for f in long[:3]] == [0, 907, 1815] and long[-1].frame == 107999


QUESTION = "Question: Which?\nOptions:\n(A) a\n(B) b"
VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"


@pytest.mark.parametrize(
    "user, shown",
    [
        (f"<video>{QUESTION}", f"{VIDEO}{QUESTION}"),
        (QUESTION, f"{VIDEO}{QUESTION}"),  # no <video> in the text: the video first, not after the text
        (f"{QUESTION}<video>", f"{QUESTION}{VIDEO}"),  # where the placeholder stands
    ],
)
def test_the_prompt_is_the_chat_template_over_the_system_and_the_question(tiny_tokenizer, user, shown):
    assert no_tool_prompt(tiny_tokenizer.apply_chat_template, user) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        f"{shown}<|im_end|>\n<|im_start|>assistant\n"
    )


@pytest.mark.parametrize(
    "reply, letter",
    [
        ("B", "B"),
        ("B.", "B"),
        ("(C) the red cup", "C"),
        ("D. It moves left.", "D"),
        ("A: yes", "A"),
        ("B, red", "B"),  # a comma sets the letter apart too
        ("B; red", None),  # a semicolon does not
        ("<think>red</think><answer>B</answer>", "B"),
        ("<think>x</think><answer>\\boxed{C}</answer>", "C"),
        ("<answer>A</answer> then <answer>D", "D"),  # the last <answer>, open to the end
        ("The answer is \\boxed{B}.", "B"),
        ("A man walks to the door.", None),
        ("I cannot tell.", None),
        ("The answer is B.", None),
        ("", None),
        ("<answer>unsure</answer>", None),
    ],
)
def test_reading_the_reply(reply, letter):
    assert reply_letter(reply) == letter


def test_the_transcript_has_the_agents_shape():
    video = VideoInfo("v.mp4", 300, 30.0)
    frames = video_frames(video)
    t = no_tool_transcript(video, frames, "(B) red", tokens=4)
    d = t.to_dict()
    assert d["prompt"] == "notool" and d["overview"] == {"frames": [0, 150], "times": [0.0, 5.0]}
    assert (d["answer"], d["end"], d["calls"], d["images"], d["turns"][0]["kind"]) == ("B", "answer", 0, 2, "answer")
    assert Transcript.from_dict(d) == t
    assert no_tool_transcript(video, frames, "hmm").end == "no_answer"
