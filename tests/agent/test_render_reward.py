"""Rendering (the released prompt bytes, chat messages), splitting response strings back into turns, the
trajectory reward on hand-made trajectories, and the transcript record."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from zoomzero_plugin.agent import (
    AgentBudget,
    AgentRewardConfig,
    Trajectory,
    Transcript,
    VideoInfo,
    chat_messages,
    first_prompt,
    get_prompts,
    prompt_text,
    response_text,
    score_response,
    score_turns,
    split_response,
)
from zoomzero_plugin.agent.render import QWEN_IMAGE, Segment

from ..helpers import played

AUTHORS = json.loads((Path(__file__).parent / "fixtures" / "videozoomer_prompts.json").read_text(encoding="utf-8"))
SPECIAL = ("<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|image_pad|>", "<|vision_end|>")
GOOD_CALL = '<think>The cup moves near 10 s.</think><video_zoom>{"segment": [10, 12], "fps": 2}</video_zoom>'
ANSWER_B = "<think>It is red.</think><answer>B</answer>"


def skip_special(text):
    """What a tokenizer's decode(skip_special_tokens=True) leaves of a response."""
    for token in SPECIAL:
        text = text.replace(token, "")
    return text


def play(turns, budget=AgentBudget(), video=VideoInfo("v.mp4", 3000, 30.0), prompt="train"):
    t = Trajectory(video, budget, get_prompts(prompt))
    return t, played(t, turns)


def test_first_prompt_is_the_chat_template_with_labelled_frames(tiny_tokenizer):
    t = Trajectory(VideoInfo("v.mp4", 16, 4.0))  # 4 s: frames 0 and 8
    text = first_prompt(tiny_tokenizer.apply_chat_template, "SYS", t.user_parts("<video>Question: why?"))
    assert text == (
        "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\n"
        f"<frame0_time0.00s>{QWEN_IMAGE}<frame1_time2.00s>{QWEN_IMAGE}Question: why?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_later_prompts_append_turns_as_the_released_rollout():
    t, response = play([GOOD_CALL])
    a = AUTHORS["rollout"]
    frames = "".join(f"<frame{i}_time{s}s>{QWEN_IMAGE}" for i, s in enumerate(["10.00", "10.67", "11.33", "12.00"]))
    # the assistant's <|im_end|> is followed directly by <|im_start|> (no newline), as in vllm_async_engine.py
    assert response == GOOD_CALL + "<|im_end|>" + a["clip_prefix"] + frames + a["clip_suffix"] + a["turn_end"]
    assert prompt_text("FIRST", [(GOOD_CALL, None)]) == "FIRST" + GOOD_CALL + "<|im_end|>"


def test_chat_messages_hold_each_frame_after_its_label(tiny_processor):
    t = Trajectory(VideoInfo("v.mp4", 16, 4.0))
    step = t.step(GOOD_CALL.replace("[10, 12]", "[1, 2]"))
    messages = chat_messages("SYS", t.user_parts("<video>Q?"), [(step.turn.text, step.observation.parts)])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "<frame0_time0.00s>"},
        {"type": "image"},
        {"type": "text", "text": "<frame1_time2.00s>"},
        {"type": "image"},
        {"type": "text", "text": "Q?"},
    ]
    rendered = tiny_processor.apply_chat_template(messages, tokenize=False)
    assert rendered.count(QWEN_IMAGE) == 2 + 2  # overview + the clip's int(2 · (2 − 1)) frames


@pytest.mark.parametrize("decode", [lambda s: s, skip_special], ids=["special-kept", "special-skipped"])
def test_split_response_recovers_every_turn(decode):
    error_call = '<think>x</think><video_zoom>{"segment": [1, 40], "fps": 2}</video_zoom>'
    _, response = play([GOOD_CALL, error_call, ANSWER_B])
    segments = split_response(decode(response))
    assert [s.role for s in segments] == ["assistant", "user", "assistant", "user", "assistant"]
    assert [s.text for s in segments[::2]] == [GOOD_CALL, error_call, ANSWER_B]
    assert segments[1].text.startswith("<tool_response>\nThe frames of the video clip are shown below:\n")
    assert segments[3].text.startswith("<tool_response>\nError: Number of frames extracted (78)")


def test_split_response_with_chat_template_newlines_and_cut_responses():
    plain = GOOD_CALL + "\nuser\n<tool_response>\nobs\n</tool_response>\nassistant\n" + ANSWER_B
    assert split_response(plain) == [
        Segment("assistant", GOOD_CALL),
        Segment("user", "<tool_response>\nobs\n</tool_response>"),
        Segment("assistant", ANSWER_B),
    ]
    cut = GOOD_CALL + "<|im_end|><|im_start|>user\n<tool_response>\nThe fr"
    assert split_response(cut) == [Segment("assistant", GOOD_CALL), Segment("user", "<tool_response>\nThe fr")]
    assert split_response(skip_special(cut))[-1] == Segment("user", "<tool_response>\nThe fr")
    stray = "<think>a<|im_start|>b</think><answer>B</answer><|im_end|>"
    assert split_response(stray) == [Segment("assistant", "<think>a<|im_start|>b</think><answer>B</answer>")]
    assert split_response("") == [Segment("assistant", "")]


TEXT = st.lists(st.sampled_from(list("ab <>/{}\n:") + ["<think>", "</think>", "<answer>"]), max_size=12).map("".join)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(TEXT, TEXT), max_size=4), TEXT)
def test_split_inverts_render(middle, final):
    turns = [(a + "<video_zoom>{}</video_zoom>", "<tool_response>\n" + o) for a, o in middle] + [(final, None)]
    for decode in (lambda s: s, skip_special):
        segments = split_response(decode(response_text(turns)))
        expected = [x for a, o in turns for x in (a, o) if x is not None]
        assert [s.text for s in segments] == expected


@pytest.mark.parametrize(
    "text",
    [
        "<|im_start|>" * 80_000,
        "</video_zoom>user\n" * 60_000,
        "</video_zoom>\nuser\n\nassistant\n" * 40_000,
        "<|im_end|>" * 100_000,
    ],
)
def test_split_response_on_one_megabyte_pathologies(text):
    assert split_response(text)[0].role == "assistant"


# --- reward ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("decode", [lambda s: s, skip_special], ids=["special-kept", "special-skipped"])
def test_reward_of_a_clean_trajectory(decode):
    _, response = play([GOOD_CALL, ANSWER_B])
    s = score_response(decode(response), "B", AgentRewardConfig(tool=0.5))
    assert (s["accuracy"], s["format"], s["tool"]) == (1.0, 1.0, 1.0)
    assert s["overall"] == pytest.approx(0.9 + 0.1 + 0.5)
    assert (s["turns"], s["calls"], s["call_errors"], s["clip_frames"]) == (2, 1, 0, 4)


def test_reward_components_by_hand():
    direct = score_response(ANSWER_B + "<|im_end|>", "B")
    assert (direct["accuracy"], direct["format"], direct["tool"], direct["overall"]) == (1, 1, 0, pytest.approx(1.0))
    wrong = score_response(play([GOOD_CALL, ANSWER_B])[1], "C", AgentRewardConfig(tool=1.0))
    assert (wrong["accuracy"], wrong["format"], wrong["tool"], wrong["overall"]) == (0, 1, 0, pytest.approx(0.1))
    error_then_answer = play(['<think>x</think><video_zoom>{"segment": [1, 2]}</video_zoom>', ANSWER_B])[1]
    e = score_response(error_then_answer, "B", AgentRewardConfig(tool=1.0))
    assert (e["accuracy"], e["format"], e["tool"], e["calls"], e["call_errors"]) == (1, 0, 0, 0, 1)
    _, unanswered = play([GOOD_CALL], AgentBudget(max_assistant_turns=1))  # a call in the only round: no answer
    u = score_response(unanswered, "B")
    assert (u["accuracy"], u["format"], u["answered"], u["overall"]) == (0, 0, 0, 0)
    boxed = score_response("<think>x</think><answer>\\boxed{B}</answer>\n\n<|im_end|>", "B")
    assert (boxed["accuracy"], boxed["format"]) == (1, 1)  # trailing blank lines keep the format point
    assert score_response("B. the red one", "B")["accuracy"] == 0  # no answer turn, no accuracy
    too_many = play([GOOD_CALL.replace("[10, 12]", "[10, 20]"), ANSWER_B])[1]  # 20 frames: an error turn
    assert score_response(too_many, "B")["format"] == 0


def test_only_calls_may_come_before_the_final_answer():
    """format counts every non-final turn as a well-formed *call*: an answer turn followed by another is not."""
    s = score_turns([ANSWER_B.replace("B", "A"), ANSWER_B], ["<|im_start|>user\nno<|im_end|>"], "B")
    assert (s["accuracy"], s["format"]) == (1.0, 0.0)


def test_a_call_in_the_last_round_answers_nothing_even_with_an_answer_inside():
    turn = '<think>x</think><answer>B</answer><video_zoom>{"segment": [1, 2], "fps": 2}</video_zoom>'
    t, _ = play([turn], AgentBudget(max_assistant_turns=1))
    record = Transcript.from_trajectory(t)
    assert t.end == "last_round_call" and t.steps[-1].turn.letter == "B" and record.answer is None


def test_reward_config_is_validated():
    with pytest.raises(ValueError, match="tool"):
        AgentRewardConfig(tool=-1)
    with pytest.raises(ValueError, match="unknown reward weight"):
        AgentRewardConfig.from_kwargs({"iou": 1})


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.sampled_from(
            [
                GOOD_CALL,
                ANSWER_B,
                "<|im_end|>",
                "<|im_start|>user\n",
                "<|im_start|>assistant\n",
                "user\n",
                "\nassistant\n",
                "<tool_response>\n",
                "The frames of the video clip are shown below:\n",
                "<frame0_time1.00s>",
                "</video_zoom>",
                "x",
            ]
        )
        | st.text(max_size=5),
        max_size=30,
    ).map("".join)
)
def test_reward_is_total_and_bounded(text):
    s = score_response(text, "B", AgentRewardConfig(tool=1.0))
    assert all(s[k] in (0.0, 1.0) for k in ("accuracy", "format", "tool"))
    assert 0.0 <= s["overall"] <= 2.0 and s["tool"] <= s["accuracy"]


# --- transcript -----------------------------------------------------------------------------------


def test_transcript_round_trips_and_renders_the_same_response():
    t, response = play([GOOD_CALL, '<think>x</think><video_zoom>{"segment": [1, 40], "fps": 2}</video_zoom>', ANSWER_B])
    record = Transcript.from_trajectory(t, tokens=[12, 13, 9])
    d = json.loads(json.dumps(record.to_dict()))
    back = Transcript.from_dict(d)
    assert back == record and back.response_text(QWEN_IMAGE) == response
    assert (d["end"], d["answer"], d["calls"], d["errors"], d["clip_frames"], d["images"]) == (
        "answer",
        "B",
        1,
        1,
        4,
        54,
    )
    assert d["turns"][0]["clip"] == {"frames": [300, 320, 340, 360], "times": [10.0, 10.666667, 11.333333, 12.0]}
    assert d["turns"][1]["error"]["code"] == "too_many_frames" and d["turns"][1]["clip"] is None
    assert d["turns"][0]["observation"].count("<image>") == 4 and [x["tokens"] for x in d["turns"]] == [12, 13, 9]
    # the reward counts a clip's frames by their labels, whatever the image placeholder
    assert score_response(back.response_text(), "B")["clip_frames"] == 4
    with pytest.raises(ValueError, match="lacks"):
        Transcript.from_dict({"turns": []})


def test_batch_reward_function_convention():
    from zoomzero_plugin.agent.videozoomer_reward import compute_score
    from zoomzero_plugin.ground_truth import GroundTruth

    truth = GroundTruth("B", ("x", "y"), (), 10.0, "q").to_json()
    _, response = play([GOOD_CALL, ANSWER_B])
    scores = compute_score(
        [
            {"response": response, "response_length": 9, "ground_truth": truth},
            {"response": ANSWER_B, "response_length": 3, "ground_truth": "b"},
        ],
        weights={"tool": 1.0},
        agent={"max_frames_per_call": 3},
    )
    assert scores[0]["format"] == 0.0 and scores[0]["tool"] == 1.0  # 4 frames > max_frames_per_call=3: malformed call
    assert scores[1]["overall"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="reward input 0: unusable ground truth"):
        compute_score([{"response": "", "ground_truth": "{}"}])


def test_looked_pays_a_well_formed_trajectory_whose_call_returned_frames():
    """The credit check's component: format 1 and at least one call that showed frames. A direct answer (format 1,
    no call), a well-formed call past the video's end (format 1, an error observation, no frames) and a call followed
    by a bad answer (a call with frames, format 0) each get 0; with weights looked=1 alone, overall is looked."""
    only_looked = AgentRewardConfig(accuracy=0, format=0, looked=1)
    cases = {  # turns -> (format, calls, looked), by hand
        "call then answer": ([GOOD_CALL, ANSWER_B], (1, 1, 1)),
        "direct answer": ([ANSWER_B], (1, 0, 0)),
        "call past the end (100 s video)": ([GOOD_CALL.replace("[10, 12]", "[200, 202]"), ANSWER_B], (1, 0, 0)),
        "call then no think": ([GOOD_CALL, "<answer>B</answer>"], (0, 1, 0)),
    }
    for name, (turns, (fmt, calls, looked)) in cases.items():
        s = score_response(play(turns)[1], "C", only_looked)  # the wrong letter: accuracy plays no part
        assert (s["format"], s["calls"], s["looked"], s["overall"]) == (fmt, calls, looked, looked), name
    with pytest.raises(ValueError, match="looked"):
        AgentRewardConfig(looked=-0.5)
