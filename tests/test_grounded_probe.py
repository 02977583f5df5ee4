"""The Zoom-Zero warm start's probe (synthetic.grounded_probe) counts what it says: coarse answers in the template the
format reward pays, and answers that ran to the token limit — checked with scripted model outputs (each count known by
hand) on real task rows, their videos decoded and encoded as the rollout shows them; and the learning-curve script
measures a warm start once and prints it before any run."""

from __future__ import annotations

import json

import pytest

from tests.test_curve_warm_starts import load
from zoomzero_plugin.gvqa.zoom import ZoomBudget
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.synthetic import grounded_probe
from zoomzero_plugin.synthetic.benchmark import make_grounding_task
from zoomzero_plugin.synthetic.warm_start import VideoInput, short_prompts

# the learning curve's coarse pass: 12-s videos at 1 fps, 4 tokens a frame (3136 px = 56 x 56 = 2 x 2 tokens of 28 px)
SHOWN = VideoInput(fps=1.0, min_pixels=3136, max_pixels=12544, zoom=ZoomBudget(max_visual_tokens=256))
GOOD = "<think>seen</think><answer>A</answer><glue>[(4, 8)]</glue>"
WHOLE = "<think>seen</think><answer>B</answer><glue>[(0, 12)]</glue>"  # the whole 12-s video: at the bound, valid
RAN_ON = GOOD + "C</answer><glue>"  # seed 1's failure: more text after the template, then the end of the turn
EMPTY_SPAN = "<think>seen</think><answer>A</answer><glue>[(7, 7)]</glue>"  # an empty span: invalid
CUT = "<think>seen</think><answer>A</answer><glue>[(4, "  # the token limit came first


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return short_prompts(read_rows(make_grounding_task(tmp_path_factory.mktemp("gprobe"), n_videos=2, seed=3)))


def test_the_probe_counts_answers_in_the_template_and_those_cut_at_the_limit(rows, tiny_model_dir, monkeypatch):
    outputs = iter(
        [
            [(GOOD, True)],  # row 1, greedy
            [(WHOLE, True), (EMPTY_SPAN, True), (CUT, False)],  # row 1, 3 sampled
            [(RAN_ON, True)],  # row 2, greedy
            [(GOOD, True), (RAN_ON, True), ("<think>seen</think><answer>A</answer>", True)],  # row 2, sampled
        ]
    )
    seen = []

    def scripted(model, processor, inputs, samples, greedy, seed, max_new_tokens):
        seen.append((samples, greedy, max_new_tokens, inputs))
        return next(outputs)

    monkeypatch.setattr(grounded_probe, "generate_responses", scripted)
    probe = grounded_probe.probe_grounded(tiny_model_dir, rows, SHOWN, max_new_tokens=96, samples=3)
    # by hand: greedy — row 1 in the template, row 2 ran on after it (ended, not in it); sampled — of six, GOOD and
    # WHOLE are in it; the empty span, the cut glue, the text after the template and the missing glue are not; one
    # ran to the limit
    assert (probe.greedy, probe.greedy_in_template, probe.greedy_unended) == (2, 1, 0)
    assert (probe.sampled, probe.sampled_in_template, probe.sampled_unended) == (6, 2, 1)
    assert probe.shares() == {"greedy_in_template": 0.5, "sampled_in_template": 2 / 6}
    assert probe.lines() == [
        "coarse answer in the template (greedy): 1/2 = 50%; ran to the token limit 0",
        "coarse answer in the template (temperature 1): 2/6 = 33%; ran to the token limit 1",
    ]
    assert [(n, greedy, limit) for n, greedy, limit, _ in seen] == [(1, True, 96), (3, False, 96)] * 2
    # each prompt shows its video as the rollout does: a 12-s video at 1 fps is 12 frames, 2 frames a temporal patch,
    # so 6 patches of 2 s each (Qwen2.5-VL's second_per_grid_ts)
    inputs = seen[0][3]
    assert inputs["video_grid_thw"][0, 0].item() == 6
    assert inputs["second_per_grid_ts"].tolist() == [2.0]


def test_nothing_generated_reads_as_a_dash():
    empty = grounded_probe.GroundedProbe()
    assert empty.shares() == {"greedy_in_template": None, "sampled_in_template": None}
    assert all(": –;" in line for line in empty.lines())


def test_the_curve_script_probes_a_warm_start_once_and_prints_it(tmp_path, monkeypatch, capsys):
    lc = load("learning_curve")
    calls = []

    def measured(model, rows, shown, max_new_tokens, samples, seed):
        calls.append((model, max_new_tokens, seed))
        probe = grounded_probe.GroundedProbe(greedy=8, greedy_in_template=8, sampled=32, sampled_in_template=30)
        return probe

    monkeypatch.setattr(grounded_probe, "probe_grounded", measured)
    model = tmp_path / "warm-1"
    model.mkdir()
    first = lc.probe(model, [], SHOWN, 1)
    again = lc.probe(model, [], SHOWN, 1)
    assert calls == [(model, 96, 1)], "measured once, with the runs' response length, then read from probe.json"
    assert first == again == json.loads((model / "probe.json").read_text())
    assert first["lines"][0] == "coarse answer in the template (greedy): 8/8 = 100%; ran to the token limit 0"
    assert first["sampled_in_template"] == 30 / 32
