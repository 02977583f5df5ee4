"""The warm start's probe (synthetic.agent_probe) counts what it says: sampled first turns that are calls the
environment runs, and answers naming the colour of a one-square clip — checked with scripted model outputs, so each
count is known by hand, on real task videos and the real environment."""

import pytest

from zoomzero_plugin.agent import AgentBudget
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.synthetic import agent_probe
from zoomzero_plugin.synthetic.benchmark import make_grounding_task

VALID = '<think>look</think><video_zoom>{"segment": [4, 8], "fps": 1}</video_zoom>'
REVERSED = '<think>look</think><video_zoom>{"segment": [8, 4], "fps": 1}</video_zoom>'  # end before start: an error
TOO_MANY = '<think>look</think><video_zoom>{"segment": [0, 12], "fps": 4}</video_zoom>'  # 48 frames > 16 a call
SLIPPED = '<think>look</think><video_zoom>{"segment": [0, D</video_zoom>'  # a token slip: not JSON, malformed


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return read_rows(make_grounding_task(tmp_path_factory.mktemp("probe"), n_videos=2, seed=3, distractors=False))


def test_the_probe_counts_valid_calls_and_named_colours(rows, tiny_model_dir, monkeypatch):
    truths = iter([GroundTruth.parse(r["answer"]).answer for r in rows])  # rows in order: one one-square clip each
    wrong = {"A": "B", "B": "C", "C": "D", "D": "A"}
    first_turns = iter([[VALID, REVERSED, TOO_MANY], [VALID, SLIPPED, "<think>x</think><answer>A</answer>"]])

    def scripted(model, processor, prompt, images, samples, greedy, seed):
        if samples == 3:
            return next(first_turns)  # the first turn, sampled 3 times (an answer turn is asked for 1)
        if '"segment": [0, 12]' in prompt:  # the answer after the whole video's clip: text after the answer
            return ["<think>seen</think><answer>A</answer> A"]
        if greedy:
            letter = next(truths)
            scripted.letter = letter
            return [f"<think>seen</think><answer>{letter}</answer>"]
        return [f"<think>seen</think><answer>{wrong[scripted.letter]}</answer>"]  # the sampled answer: wrong

    monkeypatch.setattr(agent_probe, "_generate", scripted)
    budget = AgentBudget(overview_fps=0.25, max_frames_per_call=16)
    probe = agent_probe.probe_agent(tiny_model_dir, rows, budget, samples=3, tile=True)
    # by hand: row 1 — one valid call of three, two refused ([8, 4]: end before start; 48 frames over the budget of
    # 16); row 2 — one of three, none refused (the slipped call is not JSON, the direct answer is not a call). Tiled
    # thirds of a 12-s video at 1 fps: only [4, 8] shows the one square (4.5–7.5 s), so one clip per row; greedy names
    # its colour, the sampled answer does not.
    assert (probe.first_turns, probe.valid_calls, dict(probe.segments)) == (6, 2, {(4.0, 8.0): 2})
    assert probe.refused_calls == 2
    assert (probe.clips, probe.named_greedy, probe.named_sampled) == (2, 2, 0)
    # the answer after each run of thirds ([0, 4], [0, 8], [0, 12], [4, 8], [4, 12], [8, 12]): 6 a row, all well-formed
    # but the one after [0, 12]
    assert (probe.answer_turns, probe.answers_well_formed) == (12, 10)
    assert probe.shares() == {
        "valid_calls": 2 / 6,
        "named_greedy": 1.0,
        "named_sampled": 0.0,
        "answers_well_formed": 10 / 12,
    }
    assert probe.lines()[3] == "answer turn well-formed after a clip of any run of parts (temperature 1): 10/12 = 83%"
    assert probe.lines()[0] == (
        "valid calls (first turn, temperature 1): 2/6 = 33% ([4, 8] 2); refused 2, malformed or no call 2"
    )


def test_nothing_counted_reads_as_a_dash():
    empty = agent_probe.AgentProbe()
    assert empty.shares() == {
        "valid_calls": None,
        "named_greedy": None,
        "named_sampled": None,
        "answers_well_formed": None,
    }
    assert all(line.endswith("–") or "– (none)" in line for line in empty.lines())
