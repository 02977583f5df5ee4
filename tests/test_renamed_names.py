"""The names of the release before (issue 22's one vocabulary) still work for one release: recipe keys, flags,
``--model_args`` keys, values and stored settings are read as their new names, each with one stderr line naming
the new one; an old and a new name of one setting together are refused."""

import argparse
import hashlib
import json

import pytest

from zoomzero_plugin import renames
from zoomzero_plugin.agent import videozoomer_reward
from zoomzero_plugin.agent.budget import AgentBudget
from zoomzero_plugin.data.filter import add_arguments as filter_arguments
from zoomzero_plugin.data.sft import export
from zoomzero_plugin.data.sft.sources import ReplyJournal, TeacherSession
from zoomzero_plugin.data.sft.teacher import TeacherConfig
from zoomzero_plugin.errors import ResumeError
from zoomzero_plugin.eval.runner import add_arguments as eval_arguments, upgrade_run_settings
from zoomzero_plugin.hosts.easyr1.zoomzero.options import AgentOptions, ZoomOptions
from zoomzero_plugin.integrations.lmms_eval.model_args import parse_model_args
from zoomzero_plugin.journal import check_settings

KWARGS = "worker.reward.reward_function_kwargs"


@pytest.fixture(autouse=True)
def fresh_messages(monkeypatch):
    monkeypatch.setattr(renames, "_said", set())  # each test sees its messages, as a fresh process would


def said(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


def deprecation(old: str, new: str) -> str:
    return f"zoomzero: {old} is deprecated (accepted until the next release): use {new}"


def test_old_zoom_keys_and_value_are_read_as_the_new_ones(capsys):
    old = ZoomOptions.from_kwargs({"zoom": {"max_tokens": 4096, "no_spans": "zero", "fps": 2}})
    new = ZoomOptions.from_kwargs({"zoom": {"max_visual_tokens": 4096, "no_spans": "skip", "fps": 2}})
    assert old == new and old.max_visual_tokens == 4096 and old.no_spans == "skip"
    assert said(capsys) == [
        deprecation(f"{KWARGS}.zoom.no_spans: zero", f"{KWARGS}.zoom.no_spans: skip"),
        deprecation(f"{KWARGS}.zoom.max_tokens", f"{KWARGS}.zoom.max_visual_tokens"),
    ]
    with pytest.raises(ValueError, match=r"zoom\.max_tokens is the old name of .*zoom\.max_visual_tokens: give only"):
        ZoomOptions.from_kwargs({"zoom": {"max_tokens": 4096, "max_visual_tokens": 4096}})


def test_old_agent_keys_are_read_as_the_new_ones_by_the_rollout_and_the_reward(capsys):
    old = {
        "overview_frames": 32,
        "call_frames": 8,
        "calls": 2,
        "rounds": 3,
        "images": 64,
        "turn_tokens": 100,
        "total_tokens": 1000,
        "frame_max_pixels": 50176,
        "frame_min_pixels": 12544,
    }
    expected = AgentBudget(
        max_overview_frames=32,
        max_frames_per_call=8,
        max_calls=2,
        max_assistant_turns=3,
        max_images=64,
        max_new_tokens=100,
        max_response_tokens=1000,
        max_frame_pixels=50176,
        min_frame_pixels=12544,
    )
    options = AgentOptions.from_kwargs({"agent": {"prompt": "eval", **old}})
    assert options.budget == expected and options.prompt == "eval"
    lines = said(capsys)
    assert len(lines) == 9 and deprecation(f"{KWARGS}.agent.rounds", f"{KWARGS}.agent.max_assistant_turns") in lines
    assert deprecation(f"{KWARGS}.agent.turn_tokens", f"{KWARGS}.agent.max_new_tokens") in lines
    # the reward reads the same section the same way: 4 frames > 3 a call makes the call malformed (format 0)
    call = '<think>t</think><video_zoom>{"segment": [0, 2], "fps": 2}</video_zoom>'
    response = (
        f"{call}<|im_end|>\n<|im_start|>user\nclip<|im_end|>\n<|im_start|>assistant\n<think>t</think><answer>B</answer>"
    )
    (score,) = videozoomer_reward.compute_score(
        [{"response": response, "ground_truth": "B"}], weights={"tool": 1.0}, agent={"call_frames": 3}
    )
    assert score["format"] == 0.0 and score["accuracy"] == 1.0
    assert said(capsys) == [
        deprecation("reward_function_kwargs.agent.call_frames", "reward_function_kwargs.agent.max_frames_per_call")
    ]


def test_a_message_is_said_once_per_process(capsys):
    for _ in range(3):
        AgentOptions.from_kwargs({"agent": {"rounds": 3}})
    assert len(said(capsys)) == 1


def parse(add_arguments, *argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_old_eval_flags_set_the_new_ones_and_stay_out_of_help(capsys):
    args = parse(
        eval_arguments,
        "--out",
        "o",
        "--max-tokens",
        "100",
        "--rounds",
        "2",
        "--no-spans",
        "coarse",
        "--agent-rounds",
        "3",
        "--agent-turn-tokens",
        "64",
        "--agent-frame-min-pixels",
        "3136",
    )
    assert (args.max_visual_tokens, args.max_fine_passes, args.no_spans) == (100, 2, "skip")
    assert (args.agent_max_assistant_turns, args.agent_max_new_tokens, args.agent_min_frame_pixels) == (3, 64, 3136)
    assert said(capsys) == [
        deprecation("--max-tokens", "--max-visual-tokens"),
        deprecation("--rounds", "--max-fine-passes"),
        deprecation("--no-spans coarse", "--no-spans skip"),
        deprecation("--agent-rounds", "--agent-max-assistant-turns"),
        deprecation("--agent-turn-tokens", "--agent-max-new-tokens"),
        deprecation("--agent-frame-min-pixels", "--agent-min-frame-pixels"),
    ]
    parser = argparse.ArgumentParser()
    eval_arguments(parser)
    shown = parser.format_help()
    assert "--max-visual-tokens" in shown and "--agent-max-calls" in shown
    assert "--max-tokens" not in shown and "--agent-calls" not in shown and "--rounds" not in shown
    unset = parse(eval_arguments, "--out", "o")
    assert unset.max_visual_tokens is None and unset.agent_max_calls is None  # not given: the paper's value applies


def test_old_filter_and_export_flags_set_the_new_ones(capsys):
    filtering = parse(filter_arguments, "--model", "m", "--data", "d", "--out", "o", "--max-tokens", "64")
    assert filtering.max_visual_tokens == 64
    args = parse(
        export.add_arguments,
        "--format",
        "llamafactory",
        "--source",
        "teacher",
        "--data",
        "d",
        "--out",
        "o",
        "--call-frames",
        "8",
        "--calls",
        "2",
        "--total-tokens",
        "9000",
        "--teacher-max-tokens",
        "512",
    )
    assert export._budget(args) == AgentBudget(max_frames_per_call=8, max_calls=2, max_response_tokens=9000)
    assert args.teacher_max_new_tokens == 512
    lines = said(capsys)
    assert lines[0] == deprecation("--max-tokens", "--max-visual-tokens")
    assert deprecation("--teacher-max-tokens", "--teacher-max-new-tokens") in lines
    assert deprecation("--call-frames", "--max-frames-per-call") in lines and len(lines) == 5


def test_old_model_args_keys_are_read_as_the_new_ones(capsys):
    args = parse_model_args({"model": "m", "max_tokens": 4096, "agent_calls": 2, "no_spans": "coarse"})
    values = args.values(None)
    assert (values["max_visual_tokens"], values["agent_max_calls"], values["no_spans"]) == (4096, 2, "skip")
    lines = said(capsys)
    assert deprecation("--model_args max_tokens", "max_visual_tokens") in lines
    assert deprecation("--model_args agent_calls", "agent_max_calls") in lines


# run.json of the release before, as `zoomzero eval --mode agent` wrote it (names typed here, not read from the code)
OLD_RUN = {
    "benchmark": "rows",
    "mode": "agent",
    "config": {
        "budget": {
            "max_tokens": 8192,
            "min_frame_pixels": 12544,
            "max_frame_pixels": 602112,
            "fps": 1.0,
            "factor": 28,
            "temporal_patch": 2,
            "max_frames": 256,
            "min_clip_seconds": 1.0,
        },
        "no_spans": "coarse",
        "rounds": 3,
        "uniform_frames": 20,
        "agent": {
            "budget": {
                "overview_fps": 0.5,
                "overview_frames": 64,
                "call_frames": 16,
                "calls": 4,
                "rounds": 5,
                "images": 128,
                "turn_tokens": 4096,
                "total_tokens": 32768,
                "frame_max_pixels": 100352,
                "frame_min_pixels": 25088,
            },
            "prompt": "eval",
        },
    },
}
NEW_RUN = {
    "benchmark": "rows",
    "mode": "agent",
    "config": {
        "budget": {
            "max_visual_tokens": 8192,
            "min_frame_pixels": 12544,
            "max_frame_pixels": 602112,
            "fps": 1.0,
            "factor": 28,
            "temporal_patch": 2,
            "max_frames": 256,
            "min_clip_seconds": 1.0,
        },
        "no_spans": "skip",
        "max_fine_passes": 3,
        "uniform_frames": 20,
        "agent": {
            "budget": {
                "overview_fps": 0.5,
                "max_overview_frames": 64,
                "max_frames_per_call": 16,
                "max_calls": 4,
                "max_assistant_turns": 5,
                "max_images": 128,
                "max_new_tokens": 4096,
                "max_response_tokens": 32768,
                "max_frame_pixels": 100352,
                "min_frame_pixels": 25088,
            },
            "prompt": "eval",
            "clip_as": "images",
        },  # a run from before --agent-clip-as showed images
    },
}


def test_an_old_run_json_resumes_and_is_rewritten_in_the_new_names(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(OLD_RUN))
    check_settings(path, NEW_RUN, results=True, upgrade=upgrade_run_settings)
    assert json.loads(path.read_text()) == NEW_RUN
    assert said(capsys) == [f"zoomzero: {path}: settings renamed to this release's names"]
    check_settings(path, NEW_RUN, results=True, upgrade=upgrade_run_settings)  # now as any run.json
    assert said(capsys) == []


def test_an_old_run_json_with_other_values_names_the_new_flags(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(OLD_RUN))
    changed = json.loads(json.dumps(NEW_RUN))
    changed["config"]["budget"]["max_visual_tokens"] = 4096
    changed["config"]["agent"]["budget"]["max_calls"] = 2
    from zoomzero_plugin.eval.runner import setting_flag

    with pytest.raises(ResumeError) as e:
        check_settings(path, changed, results=True, name=setting_flag, upgrade=upgrade_run_settings)
    assert "--max-visual-tokens (8192 there, 4096 now)" in str(e.value)
    assert "--agent-max-calls (4 there, 2 now)" in str(e.value)
    assert json.loads(path.read_text()) == OLD_RUN  # untouched


def test_a_teacher_journal_of_the_release_before_is_still_replayed(tmp_path):
    messages, frames = [{"role": "user", "content": "q"}], [0, 8]
    # the request digest as the release before computed it: its budget under the old field names
    old_budget = {
        "overview_fps": 0.5,
        "overview_frames": 64,
        "call_frames": 16,
        "calls": 4,
        "rounds": 5,
        "images": 128,
        "turn_tokens": 4096,
        "total_tokens": 32768,
        "frame_max_pixels": 100352,
        "frame_min_pixels": 25088,
    }
    settings = {"model": "teacher", "temperature": 1.0, "max_tokens": 4096, "budget": old_budget}
    digest = hashlib.sha256(
        json.dumps([settings, messages, frames], sort_keys=True, ensure_ascii=False).encode("utf-8")
    ).hexdigest()[:32]
    path = tmp_path / "journal.jsonl"
    path.write_text(json.dumps({"key": "q1/0", "digest": digest, "reply": "paid for"}) + "\n")

    class NoTeacher:
        cfg = TeacherConfig(url="http://127.0.0.1:9", model="teacher")

        def chat(self, *_):
            raise AssertionError("the journalled reply must be replayed, not asked again")

    session = TeacherSession(NoTeacher(), ReplyJournal(path), AgentBudget())
    assert session.reply("q1/0", messages, frames, cache=lambda: None) == "paid for"
    other = TeacherSession(NoTeacher(), ReplyJournal(path), AgentBudget(max_calls=3))
    with pytest.raises(ResumeError, match="differs from the one journalled"):
        other.reply("q1/0", messages, frames, cache=lambda: None)
