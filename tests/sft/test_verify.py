"""Verifiers and sample structure, case by case on every threshold; the LLaMA-Factory check's refusals; the
torchaudio guard; a fuzzed placeholder split."""

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import given, strategies as st
from PIL import Image

from zoomzero_plugin.agent import AgentBudget, Trajectory, Transcript, VideoInfo
from zoomzero_plugin.data.sft.sharegpt import Sample, build_sample, dataset_info, structure_problems
from zoomzero_plugin.data.sft.teacher import openai_messages
from zoomzero_plugin.data.sft.verify import judge, replay, verify_transcript

VIDEO = VideoInfo("v.mp4", 3000, 30.0)  # 100 s at 30 fps
ANSWER = "<think>seen</think><answer>B</answer>"


def call(s, e, fps):
    return f'<think>look</think><video_zoom>{{"segment": [{s}, {e}], "fps": {fps}}}</video_zoom>'


def verdict(turns, truth="B", budget=AgentBudget(), min_calls=0):
    traj, _ = replay(VIDEO, turns, budget, "eval")
    return judge(traj, truth, min_calls)[0]


@pytest.mark.parametrize(
    "turns, reason",
    [
        ([call(10, 18, 2), ANSWER], None),  # exactly 16 frames: within the budget
        ([call(10, 18.45, 2), ANSWER], None),  # int(16.9) = 16, the authors' count
        ([call(10, 18.5, 2), ANSWER], "broken_budget"),  # 17 frames
        ([call(0, 1, 2)] * 4 + [ANSWER], None),  # 4 calls, answer in round 5
        ([call(0, 1, 2)] * 5, "broken_budget"),  # a call in the last round
        ([call(120, 130, 1), ANSWER], "bad_call"),  # wholly past the end of a 100-s video
        ([call(5, 4, 1), ANSWER], "bad_call"),  # reversed
        (['<think>x</think><video_zoom>{"segment": [1, 2]}</video_zoom>', ANSWER], "malformed_turn"),  # no fps
        (["<answer>B</answer>"], "malformed_turn"),  # no think
        ([ANSWER + " trailing"], "malformed_turn"),
        (["<think>hmm</think>"], "no_answer"),
        ([call(0, 1, 2), "<think>a</think><answer>C</answer>"], "wrong_answer"),
        ([ANSWER], None),
        (["<think>a</think><answer>\\boxed{B}</answer>"], None),  # the evaluation prompt's boxed answer
        # a call both malformed (no think) and refused (past the end): the format fault is named first
        (['<video_zoom>{"segment": [120, 130], "fps": 1}</video_zoom>', ANSWER], "malformed_turn"),
    ],
)
def test_judge_reasons(turns, reason):
    assert verdict(turns) == reason


def recorded(turns, budget=AgentBudget(), **change):
    traj, _ = replay(VIDEO, turns, budget, "eval")
    return replace(Transcript.from_trajectory(traj), **change)


def test_a_stored_transcript_must_replay_to_the_same_end():
    good = recorded([call(10, 12, 2), ANSWER])
    assert verify_transcript(good, "B", AgentBudget()).reason is None
    extra = replace(good, turns=good.turns + good.turns[-1:])  # one turn after the end
    assert verify_transcript(extra, "B", AgentBudget()).detail == "1 turn(s) after the end (answer)"
    claimed = replace(good, end="no_answer")  # the record says otherwise than its turns
    assert verify_transcript(claimed, "B", AgentBudget()).reason == "inconsistent"


def test_a_turn_the_total_budget_cut_is_replayed_as_cut():
    """A record that ended at total_tokens replays its last turn as cut: a call there is not run (no answer),
    the same end as the record's, so the verdict is about the trajectory, not an inconsistency."""
    turns = [call(10, 12, 2), call(20, 22, 2)]
    traj, _ = replay(VIDEO, turns, AgentBudget(), "eval", cut_last=True)
    record = Transcript.from_trajectory(traj)
    assert record.end == "total_tokens"
    assert verify_transcript(record, "B", AgentBudget()).reason == "no_answer"


def test_min_calls_threshold():
    assert verdict([ANSWER], min_calls=1) == "too_few_calls"
    assert verdict([call(0, 1, 2), ANSWER], min_calls=1) is None
    assert verdict([call(0, 1, 2), ANSWER], min_calls=2) == "too_few_calls"


def test_image_budget_is_a_broken_budget():
    budget = AgentBudget(max_overview_frames=50, max_images=60)  # the overview of 50 frames + 10 left
    assert verdict([call(0, 5, 2), ANSWER], budget=budget) is None  # 10 frames: exactly the rest
    assert verdict([call(0, 5.5, 2), ANSWER], budget=budget) == "broken_budget"  # 11


def sample(messages, frames):
    return Sample("s1", "t", "q", "v.mp4", messages, frames)


def test_structure_problems_name_role_order_and_media_count():
    good = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "<image>q"},
        {"role": "assistant", "content": "a"},
    ]
    assert structure_problems(sample(good, [0])) == []
    assert "1 <image> placeholders for 2 frames" in structure_problems(sample(good, [0, 1]))[0]
    swapped = [good[0], good[2], good[1]]
    assert "message 1 is 'assistant' where user or observation must be" in structure_problems(sample(swapped, [0]))[0]
    assert "must be an even number" in structure_problems(sample(good[:2], [0]))[0]


def test_built_sample_renders_the_trajectory_in_turn_order():
    traj = Trajectory(VIDEO)
    traj.step(call(10, 12, 2))
    traj.step(ANSWER)
    s = build_sample("id", "src", "q", traj, "<video>Question?")
    assert [m["role"] for m in s.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert s.frames == list(range(0, 3000, 60)) + [300, 320, 340, 360]
    assert s.messages[1]["content"].endswith("<frame49_time98.00s><image>Question?")
    assert "<frame3_time12.00s><image>" in s.messages[3]["content"]
    assert (
        build_sample("id", "src", "q", traj, "Q", observation_role="observation").messages[3]["role"] == "observation"
    )


def test_llamafactory_check_refuses_bad_rows_naming_why(tmp_path, tiny_model_dir):
    from zoomzero_plugin.data.sft.llamafactory import LlamaFactoryCheck

    Image.new("RGB", (56, 56)).save(tmp_path / "a.png")
    (tmp_path / "dataset_info.json").write_text(json.dumps(dataset_info("d", "d.jsonl")))
    check = LlamaFactoryCheck({"template": "qwen2_vl", "cutoff_len": 100}, tmp_path, "d", model=str(tiny_model_dir))
    row = {
        "messages": [{"role": "user", "content": "<image>hi"}, {"role": "assistant", "content": "yo"}],
        "images": ["a.png"],
    }
    assert check.length(row) > 0
    swapped = {**row, "messages": row["messages"][::-1]}
    with pytest.raises(ValueError, match="roles do not alternate"):
        check.length(swapped)
    with pytest.raises(ValueError, match="LLaMA-Factory refuses it"):
        check.length({**row, "images": ["a.png", "a.png"]})


def test_torchaudio_guard_lets_a_cuda_torchaudio_import_on_a_cpu_torch():
    code = (
        "import sys; from zoomzero_plugin import cpu_compat as c; g = c.ensure_torchaudio_importable; "
        # the venv's start-up hook (scripts/install-cpu.sh) installed the guard already: start without it
        "sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, c._TorchaudioExtensionGuard)]; "
        "assert g() and not g(); import torchaudio, torch; "
        "print(torch.version.cuda is None, torchaudio._extension._IS_TORCHAUDIO_EXT_AVAILABLE)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    cpu_torch, extension = done.stdout.split()
    assert extension == "False" if cpu_torch == "True" else extension in ("True", "False")


@given(
    st.lists(st.text(alphabet="ab<>image\n ", max_size=30), min_size=1, max_size=4),
    st.integers(min_value=0, max_value=3),
)
def test_placeholders_split_keeps_every_character(texts, extra):
    content = "<image>".join(texts) + "<image>" * extra
    n = content.count("<image>")
    img = Image.new("RGB", (2, 2))
    [message] = openai_messages([{"role": "user", "content": content}], [img] * n)
    if n == 0:
        assert message["content"] == content
        return
    rebuilt = "".join(p["text"] if p["type"] == "text" else "<image>" for p in message["content"])
    assert rebuilt == content
    assert sum(p["type"] == "image_url" for p in message["content"]) == n


def test_placeholder_split_on_a_megabyte_of_text():
    content = "<image>" + "x" * 1_000_000 + "<image>"
    img = Image.new("RGB", (2, 2))
    [message] = openai_messages([{"role": "user", "content": content}], [img, img])
    assert [p["type"] for p in message["content"]] == ["image_url", "text", "image_url"]


def test_export_rows_are_checked_as_eval_checks_them():
    """One video per row as a list, unique qids, a parsable answer: every bad row named in one DataError (a bare
    string of a video path used to be read as its first character)."""
    from zoomzero_plugin.data.sft.sources import questions_from_rows
    from zoomzero_plugin.errors import DataError
    from zoomzero_plugin.gvqa.prompts import grounding_row

    def row(qid, video="v.mp4"):
        return grounding_row(qid=qid, question="Which?", options=["a", "b"], answer="B", duration=10.0, video=video)

    good = questions_from_rows([row("q1"), row("q2", "w.mp4")], "rows.jsonl")
    assert {q: (x.video, x.truth.answer) for q, x in good.items()} == {"q1": ("v.mp4", "B"), "q2": ("w.mp4", "B")}
    as_string = {**row("q3"), "videos": "v.mp4"}
    with pytest.raises(DataError) as bad:
        questions_from_rows([row("q1"), as_string, row("q1"), {"videos": ["v.mp4"]}], "rows.jsonl")
    message = str(bad.value)
    assert message.startswith("rows.jsonl: 3 bad row(s): ")
    assert "row 2 (q3): expected one video, got 'v.mp4'" in message
    assert "row 3: question id 'q1' repeats row 1" in message and "row 4: no 'answer' column" in message
