"""What the export keeps, at its edges: duplicates are the same turns *for the same question*, the per-question cap
counts per source and keeps exactly N, sample ids never collide, the sample checks look both ways, and a sample of
exactly ``cutoff_len`` tokens is kept."""

import json

import pytest
from PIL import Image

from zoomzero_plugin.agent import AgentBudget, VideoInfo
from zoomzero_plugin.data.sft.export import _ids, _select
from zoomzero_plugin.data.sft.llamafactory import check_with_llamafactory
from zoomzero_plugin.data.sft.sharegpt import Sample, dataset_info, structure_problems
from zoomzero_plugin.data.sft.sources import Candidate
from zoomzero_plugin.data.sft.verify import Verdict, judge, replay
from zoomzero_plugin.errors import DataError

VIDEO = VideoInfo("v.mp4", 3000, 30.0)
ANSWER = "<think>seen</think><answer>B</answer>"


def call(s, e):
    return f'<think>look</think><video_zoom>{{"segment": [{s}, {e}], "fps": 2}}</video_zoom>'


def candidate(source, qid, index, turns):
    traj, _ = replay(VIDEO, turns, AgentBudget(), "eval")
    reason, detail = judge(traj, "B")
    return Candidate(source, qid, index, "Which?", Verdict(traj, reason, detail))


def test_duplicates_are_the_same_turns_for_the_same_question():
    kept, dropped = _select(
        [
            candidate("teacher", "q1", 0, [ANSWER]),
            candidate("teacher", "q2", 0, [ANSWER]),
            candidate("teacher", "q1", 1, [ANSWER]),
        ],
        None,
    )
    assert [(c.qid, c.index) for c in kept] == [("q1", 0), ("q2", 0)] and dropped == {"duplicate": 1}


def test_the_per_question_cap_keeps_exactly_n_per_source():
    distinct = [[call(10, 12), ANSWER], [call(20, 22), ANSWER], [call(30, 32), ANSWER]]
    teacher = [candidate("teacher", "q1", i, turns) for i, turns in enumerate(distinct)]
    kept, dropped = _select(teacher, 2)
    assert [c.index for c in kept] == [0, 1] and dropped == {"over_per_question": 1}
    kept, dropped = _select([*teacher[:1], candidate("predictions", "q1", 0, distinct[1])], 1)
    assert [c.source for c in kept] == ["teacher", "predictions"] and not dropped  # one each


def test_sample_ids_never_collide():
    ids = _ids([candidate("teacher", q, 0, [ANSWER]) for q in ("a/b", "a_b", "a b", "ab")])
    assert len(set(ids)) == 4 and ids[3] == "teacher-ab-0"  # a safe qid is kept as it is


def sample(messages, frames, images=()):
    return Sample("s1", "t", "q", "v.mp4", messages, frames, list(images))


GOOD = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "<image>q"},
    {"role": "assistant", "content": "a"},
]


def test_sample_checks_look_both_ways():
    assert any("3 image files for 1 frames" in p for p in structure_problems(sample(GOOD, [0], ["a", "b", "c"])))
    assert structure_problems(sample(GOOD, [0])) == []  # images not written yet: fine
    assert any("0 messages after the system prompt" in p for p in structure_problems(sample(GOOD[:1], [])))


def test_a_sample_of_exactly_cutoff_len_tokens_is_kept(tmp_path, tiny_model_dir):
    from zoomzero_plugin.data.sft.llamafactory import LlamaFactoryCheck

    Image.new("RGB", (56, 56)).save(tmp_path / "a.png")
    (tmp_path / "dataset_info.json").write_text(json.dumps(dataset_info("d", "d.jsonl")))
    s = sample([{"role": "user", "content": "<image>hi"}, {"role": "assistant", "content": "yo"}], [0], ["a.png"])
    n = LlamaFactoryCheck(
        {"template": "qwen2_vl", "cutoff_len": 10**6}, tmp_path, "d", model=str(tiny_model_dir)
    ).length(s.row())
    kept, info = check_with_llamafactory(
        [s],
        tmp_path,
        "d",
        {"template": "qwen2_vl", "cutoff_len": n},
        str(tiny_model_dir),
        drop_long=False,
        progress=False,
    )
    assert [k.id for k in kept] == ["s1"] and info["over_cutoff"] == 0 and info["tokens_max"] == n
    with pytest.raises(DataError, match=f"1 sample\\(s\\) exceed cutoff_len {n - 1}"):
        check_with_llamafactory(
            [s],
            tmp_path,
            "d",
            {"template": "qwen2_vl", "cutoff_len": n - 1},
            str(tiny_model_dir),
            drop_long=False,
            progress=False,
        )
