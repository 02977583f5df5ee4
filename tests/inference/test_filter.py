import json

import pytest
from hypothesis import given, strategies as st

from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.data.filter import FilterConfig, decide, filter_rows
from zoomzero_plugin.errors import ResumeError
from zoomzero_plugin.rows import read_rows, row_truth

from .conftest import SMALL, ScriptedBackend, grounded


def test_delta_rule_on_hand_computed_cases():
    def delta_rule(*args, **kwargs):
        return decide(*args, **kwargs, rule="delta")

    assert delta_rule([True, False], [0.9, 0.1], True, 0.1) == []  # delta = 0.4
    assert delta_rule([False] * 4, [0.5] * 4, True, 0.1) == ["weak_grounding"]  # delta = 0
    assert delta_rule([False] * 2, [0.3, 0.1], True, 0.1) == []  # delta = 0.3 - 0.2 = 0.1: not below
    assert delta_rule([False] * 2, [0.29, 0.1], True, 0.1) == ["weak_grounding"]  # 0.095
    assert delta_rule([True] * 8, [1.0, 0.0] * 4, True, 0.1) == ["all_correct"]


def test_authors_rule_on_hand_computed_cases():
    # filter_variance.py keeps (delta_iou > 0.1 or np.min(ious) > 0.0) and 0.0 <= hit < 1.0
    assert decide([False] * 4, [0.5] * 4, True, 0.1) == []  # spread 0, but every sample overlaps the clue
    assert decide([False] * 4, [0.5, 0.5, 0.5, 0.0], True, 0.1) == []  # spread 0.5 - 0.375 = 0.125 > 0.1
    assert decide([False] * 4, [0.25, 0.25, 0.25, 0.0], True, 0.1) == ["weak_grounding"]  # 0.0625, one at 0
    assert decide([False] * 2, [0.5, 0.25], True, 0.25) == []  # spread 0.125 <= 0.25, but min 0.25 > 0
    assert decide([False] * 2, [0.5, 0.0], True, 0.25) == ["weak_grounding"]  # spread 0.25: not > 0.25; min 0
    assert decide([False] * 2, [0.0, 0.0], True, 0.1) == ["weak_grounding"]
    assert decide([True] * 4, [0.5] * 4, True, 0.1) == ["all_correct"]  # hit == 1 goes, whatever the IoUs
    assert decide([True] * 2, [0.0, 0.0], False, 0.1) == ["all_correct", "no_ground_truth_spans"]
    assert decide([False, True], [0.8, 0.2], True, 0.1, clue_correct=True, full_correct=True) == [
        "answerable_without_clue"
    ]
    assert decide([False, True], [0.8, 0.2], True, 0.1, clue_correct=False, full_correct=False) == [
        "not_answerable_from_clue"
    ]
    assert decide([False, True], [0.8, 0.2], True, 0.1, clue_correct=True, full_correct=False) == []


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.floats(0.01, 0.5))
def test_weak_grounding_is_exactly_max_minus_mean_below_delta(ious, delta):
    spread = max(ious) - sum(ious) / len(ious)
    weak = "weak_grounding" in decide([False] * len(ious), ious, True, delta, rule="delta")
    if spread < delta - 1e-6:
        assert weak
    if spread >= delta:
        assert not weak
    authors = "weak_grounding" in decide([False] * len(ious), ious, True, delta)
    assert authors == (not (spread > delta or min(ious) > 0))


def test_unknown_rule_and_check_names_are_refused():
    with pytest.raises(ValueError, match="grounding_rule"):
        FilterConfig(grounding_rule="loose")
    with pytest.raises(ValueError, match="quality_check"):
        FilterConfig(quality_check="yes")


def test_filter_keeps_rows_by_the_sampled_responses(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)[:3]
    truths = [row_truth(r) for r in rows]

    def script(request, k):
        if request.choices:
            return None
        truth = next(t for t in truths if request.videos[0]["video"].endswith(t.qid + ".mp4"))
        wrong = "B" if truth.answer == "A" else "A"
        if truth is truths[0]:  # one sample finds the clue, the others miss: delta = 1 - 1/4
            return grounded(wrong if k else truth.answer, list(truth.spans) if k == 0 else [(0.0, 0.2)])
        if truth is truths[1]:  # always right: too easy
            return grounded(truth.answer, list(truth.spans) if k == 0 else [(0.0, 0.2)])
        return grounded(wrong, [(0.0, 12.0)])  # the same span every time: delta = 0

    backend = ScriptedBackend(tiny_backend, script)
    out = tmp_path / "kept.jsonl"
    authors = filter_rows(
        backend,
        rows,
        tmp_path / "authors.jsonl",
        SMALL,
        FilterConfig(n=4),
        max_new_tokens=8,
        batch_size=2,
        progress=False,
    )
    # the authors' rule also keeps row 2: every sample's span overlaps its clue (min IoU > 0)
    assert authors["kept"] == 2 and read_rows(tmp_path / "authors.jsonl") == [rows[0], rows[2]]
    assert authors["reasons"] == {"all_correct": 1}
    summary = filter_rows(
        backend,
        rows,
        out,
        SMALL,
        FilterConfig(n=4, grounding_rule="delta"),
        max_new_tokens=8,
        batch_size=2,
        progress=False,
    )
    assert read_rows(out) == rows[:1]
    assert summary["kept"] == 1 and summary["reasons"] == {"all_correct": 1, "weak_grounding": 1}
    decisions = {d["qid"]: d for d in map(json.loads, (tmp_path / "kept.decisions.jsonl").read_text().splitlines())}
    assert decisions[truths[0].qid]["ious"][0] == pytest.approx(1.0) and decisions[truths[0].qid]["samples"] == 4
    assert decisions[truths[0].qid]["delta"] == pytest.approx(0.75) and decisions[truths[0].qid]["correct"] == 1
    assert decisions[truths[2].qid]["delta"] == 0.0 and decisions[truths[2].qid]["reasons"] == ["weak_grounding"]
    assert json.loads((tmp_path / "kept.summary.json").read_text()) == summary
    sampled = [g for r, g in backend.calls if not r.choices]
    assert [len(g.outputs) for g in sampled] == [4] * 6  # 3 rows, two runs (two output files)
    # resuming asks nothing again
    before = len(backend.calls)
    again = filter_rows(
        backend, rows, out, SMALL, FilterConfig(n=4, grounding_rule="delta"), max_new_tokens=8, progress=False
    )
    assert again == summary and len(backend.calls) == before
    # another delta re-decides from the stored samples (row 0: delta 0.75 < 0.8); other samples are refused
    stricter = filter_rows(
        backend,
        rows,
        out,
        SMALL,
        FilterConfig(n=4, delta=0.8, grounding_rule="delta"),
        max_new_tokens=8,
        progress=False,
    )
    assert stricter["kept"] == 0 and read_rows(out) == [] and len(backend.calls) == before
    with pytest.raises(ResumeError, match=r"other settings: --n \(4 there, 5 now\)"):
        filter_rows(backend, rows, out, SMALL, FilterConfig(n=5), max_new_tokens=8, progress=False)


def test_filter_cli_with_the_quality_check_on_the_real_model(tiny_model_dir, bench_rows, tmp_path, capsys):
    out = tmp_path / "kept.jsonl"
    code = zoomzero(
        [
            "data",
            "filter",
            "--model",
            str(tiny_model_dir),
            "--data",
            str(bench_rows),
            "--out",
            str(out),
            "--n",
            "3",
            "--limit",
            "2",
            "--quality-check",
            "--max-visual-tokens",
            "64",
            "--min-frame-pixels",
            str(4 * 28 * 28),
            "--max-new-tokens",
            "8",
            "--no-progress",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"] == 2 and summary["kept"] + summary["dropped"] == 2
    for line in (tmp_path / "kept.decisions.jsonl").read_text().splitlines():
        d = json.loads(line)
        assert d["samples"] == 3 and isinstance(d["clue_correct"], bool) and isinstance(d["full_correct"], bool)
        correct = [i < d["correct"] for i in range(3)]
        assert d["reasons"] == decide(correct, d["ious"], True, 0.1, d["clue_correct"], d["full_correct"])


def test_only_quality_check_judges_rows_without_sampling(tiny_backend, bench_rows, tmp_path):
    """Stage II's PLM rows: the quality check alone (clue-only right, whole video wrong), no sampled answers."""
    rows = read_rows(bench_rows)[:3]
    truths = [row_truth(r) for r in rows]

    def script(request, k):
        assert request.choices, "no sampled grounding answers"
        truth = next(t for t in truths if request.videos[0]["video"].endswith(t.qid + ".mp4"))
        clue_only = all(c["video_start"] > 0 or c["video_end"] < truth.duration for c in request.videos)
        wrong = "B" if truth.answer == "A" else "A"
        if truth is truths[0]:  # needs the clue: right from it, wrong from the whole video -> kept
            return truth.answer if clue_only else wrong
        if truth is truths[1]:  # answerable without the clue -> answerable_without_clue
            return truth.answer
        return wrong  # wrong even from the clue -> not_answerable_from_clue

    backend = ScriptedBackend(tiny_backend, script)
    cfg = FilterConfig(quality_check="both", variance=False)
    summary = filter_rows(backend, rows, tmp_path / "plm.jsonl", SMALL, cfg, max_new_tokens=8, progress=False)
    assert read_rows(tmp_path / "plm.jsonl") == rows[:1]
    assert summary["reasons"] == {"answerable_without_clue": 1, "not_answerable_from_clue": 1}
    clue_only = filter_rows(
        backend,
        rows,
        tmp_path / "clue.jsonl",
        SMALL,
        FilterConfig(quality_check="clue", variance=False),
        max_new_tokens=8,
        progress=False,
    )
    assert clue_only["kept"] == 2 and clue_only["reasons"] == {"not_answerable_from_clue": 1}
    with pytest.raises(ValueError, match="needs --quality-check"):
        FilterConfig(variance=False)
