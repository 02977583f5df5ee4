"""The synthetic warm start and the grounding task of the learning curve: what they teach and show, read back from
the videos and the agent's own protocol; and the shared-prefix cache, which must not change the loss."""

from __future__ import annotations

import json
import re

import decord
import pytest
from hypothesis import given, settings, strategies as st

from zoomzero_plugin.agent import AgentBudget, Trajectory, VideoInfo
from zoomzero_plugin.ground_truth import GroundTruth
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.synthetic.benchmark import SQUARES_KEY, TASK_COLORS, make_grounding_task
from zoomzero_plugin.synthetic.sft import _batch, _encode, _loss, shared_prefix, train_steps
from zoomzero_plugin.synthetic.videos import dominant_color
from zoomzero_plugin.synthetic.warm_start import (
    agent_examples,
    call_segments,
    call_turn,
    grounded_response,
    tile_unions,
    warm_start,
)


@pytest.fixture(scope="module")
def task_rows(tmp_path_factory):
    return read_rows(make_grounding_task(tmp_path_factory.mktemp("task"), n_videos=3, seed=5))


def test_the_task_shows_the_answer_only_in_the_middle_third(task_rows):
    for row in task_rows:
        truth = GroundTruth.parse(row["answer"])
        squares = json.loads(row["answer"])[SQUARES_KEY]
        assert list(truth.options) == list(TASK_COLORS) and truth.duration == 12.0
        assert [tuple(s[:2]) for s in squares] == [(0.5, 3.5), (4.5, 7.5), (8.5, 11.5)]
        assert list(truth.spans) == [(4.5, 7.5)] and len({s[2] for s in squares}) == 3, "three different colours"
        reader = decord.VideoReader(row["videos"][0])  # 4 fps: frame k is at k/4 s
        seen = [dominant_color(f) for f in reader.get_batch([8, 24, 40, 1, 17, 47]).asnumpy()]
        assert seen[:3] == [s[2] for s in squares], "each third shows its own square (at 2, 6 and 10 s)"
        assert seen[3:] == [None, None, None], "no square at 0.25, 4.25 or 11.75 s (the gaps)"
        assert "ABCD"[TASK_COLORS.index(squares[1][2])] == truth.answer


def _centre(frame):
    """The mean RGB of a frame's centre (where the squares are), as integers."""
    h, w = frame.shape[:2]
    return tuple(int(v) for v in frame[h // 2 - 2 : h // 2 + 2, w // 2 - 2 : w // 2 + 2].reshape(-1, 3).mean(0))


def test_without_distractors_only_the_middle_third_shows_a_square(tmp_path):
    for row in read_rows(make_grounding_task(tmp_path, n_videos=3, seed=5, distractors=False)):
        truth = GroundTruth.parse(row["answer"])
        squares = json.loads(row["answer"])[SQUARES_KEY]
        assert [tuple(s[:2]) for s in squares] == [(4.5, 7.5)] and list(truth.spans) == [(4.5, 7.5)]
        reader = decord.VideoReader(row["videos"][0])
        seen = [dominant_color(f) for f in reader.get_batch([8, 24, 40, 1, 17, 47]).asnumpy()]
        assert seen == [None, squares[0][2], None, None, None, None], "2 s and 10 s show no square now"
        assert "ABCD"[TASK_COLORS.index(squares[0][2])] == truth.answer


@pytest.mark.parametrize("n, counts", [(8, [2, 2, 2, 2]), (6, [1, 1, 2, 2]), (3, [0, 1, 1, 1])])
def test_without_distractors_every_letter_is_the_answer_equally_often(tmp_path, n, counts):
    """Only the answer's square is shown, so a letter the answer more often than the others would pay a blind policy
    more than a guess: over n videos each letter is the answer n // 4 or n // 4 + 1 times (sorted counts by hand)."""
    rows = read_rows(make_grounding_task(tmp_path, n_videos=n, seed=7, distractors=False, placement="cued"))
    answers = [GroundTruth.parse(r["answer"]).answer for r in rows]
    assert sorted(answers.count(letter) for letter in "ABCD") == counts


def test_a_full_height_square_fills_the_frame_top_to_bottom(tmp_path):
    """``square=1``: a 84-px square in a 112 x 84 frame — rows 0 to 83, columns 14 to 97 — where the default (two
    thirds: 56 px) leaves the top rows and the sides grey."""
    (row,) = read_rows(make_grounding_task(tmp_path / "full", n_videos=1, seed=5, square=1.0))
    (default,) = read_rows(make_grounding_task(tmp_path / "default", n_videos=1, seed=5))
    _, _, colour = json.loads(row["answer"])[SQUARES_KEY][1]
    frame = decord.VideoReader(row["videos"][0]).get_batch([24]).asnumpy()[0]  # 6 s: the middle third's square
    plain = decord.VideoReader(default["videos"][0]).get_batch([24]).asnumpy()[0]
    for y, x in ((3, 56), (80, 56), (42, 18), (42, 93)):
        assert dominant_color(frame[y - 2 : y + 3, x - 2 : x + 3]) == colour, (y, x)
        assert dominant_color(plain[y - 2 : y + 3, x - 2 : x + 3]) is None, (y, x)
    assert dominant_color(frame[40:45, 2:7]) is None, "the sides stay background"


def test_a_cued_task_marks_its_evidence_third_where_a_quarter_fps_overview_looks(tmp_path):
    rows = read_rows(make_grounding_task(tmp_path, n_videos=12, seed=2, distractors=False, placement="cued"))
    thirds = []
    for row in rows:
        truth = GroundTruth.parse(row["answer"])
        ((start, end, colour),) = json.loads(row["answer"])[SQUARES_KEY]
        k = int(start // 4)  # the evidence third: 0.5-3.5, 4.5-7.5 or 8.5-11.5 s
        thirds.append(k)
        assert (start, end) == (4 * k + 0.5, 4 * k + 3.5) and list(truth.spans) == [(start, end)]
        assert "white mark" in truth.question and truth.answer == "ABCD"[TASK_COLORS.index(colour)]
        frames = decord.VideoReader(row["videos"][0]).get_batch([0, 16, 32, 16 * k + 8]).asnumpy()  # 0, 4, 8 s
        centres = [_centre(f) for f in frames]
        for j in range(3):  # the overview's frames: the white mark at the evidence third's first frame only
            assert (min(centres[j]) > 200) == (j == k), (k, centres)
        assert dominant_color(frames[3]) == colour, "the square itself in the middle of its third"
    assert set(thirds) == {0, 1, 2}, "the evidence third varies from video to video"


def test_an_unknown_placement_is_refused(tmp_path):
    with pytest.raises(ValueError, match="placement must be one of"):
        make_grounding_task(tmp_path, n_videos=1, placement="left")


@given(st.floats(2.0, 600.0), st.sampled_from([4, 8, 16]), st.integers(2, 5), st.booleans())
@settings(max_examples=60, deadline=None)
def test_every_taught_call_runs(duration, call_frames, parts, dense):
    """The calls the warm start teaches are valid for the agent's own environment: frames, not an error."""
    assert call_segments(12.0, 16) == [(0, 12, 1), (4, 12, 1), (8, 12, 1)]
    video = VideoInfo("v.mp4", int(duration * 4), 4.0)
    segments = call_segments(video.duration, call_frames, parts, dense=dense)
    assert 1 <= len(segments) <= parts and len({start for start, _, _ in segments}) == len(segments)
    assert len({end for _, end, _ in segments}) == 1, "only the start differs"
    for segment in segments:
        step = Trajectory(video, AgentBudget(max_frames_per_call=call_frames)).step(call_turn(*segment))
        assert step.error is None and step.observation is not None and step.observation.frames


def test_tiled_calls_cut_the_video_in_whole_parts_from_zero():
    """``tile``: consecutive parts of one whole length; worked by hand. 12 s in thirds: 4 s each; with 3 frames a call
    at most, 3 s each from 0; 2.5 s in thirds: 1 s each, and only two fit; the default is unchanged."""
    assert call_segments(12.0, 16, tile=True) == [(0, 4, 1), (4, 8, 1), (8, 12, 1)]
    assert call_segments(12.0, 3, tile=True) == [(0, 3, 1), (3, 6, 1), (6, 9, 1)]
    assert call_segments(12.0, 16, parts=4, tile=True) == [(0, 3, 1), (3, 6, 1), (6, 9, 1), (9, 12, 1)]
    assert call_segments(2.5, 16, tile=True) == [(0, 1, 1), (1, 2, 1)]
    assert call_segments(12.0, 16) == [(0, 12, 1), (4, 12, 1), (8, 12, 1)]
    # dense: the most whole frames a second a call may ask (16 frames: 4 s at 4 fps, 8 s at 2, 12 s at 1)
    assert call_segments(12.0, 16, tile=True, dense=True) == [(0, 4, 4), (4, 8, 4), (8, 12, 4)]
    assert call_segments(12.0, 16, dense=True) == [(0, 12, 1), (4, 12, 2), (8, 12, 4)]
    assert call_segments(12.0, 3, tile=True, dense=True) == [(0, 3, 1), (3, 6, 1), (6, 9, 1)]


@given(st.floats(1.0, 600.0), st.sampled_from([1, 4, 8, 16]), st.integers(2, 5), st.booleans())
@settings(max_examples=60, deadline=None)
def test_every_tiled_call_runs(duration, call_frames, parts, dense):
    video = VideoInfo("v.mp4", int(duration * 4), 4.0)
    segments = call_segments(video.duration, call_frames, parts, tile=True, dense=dense)
    assert 1 <= len(segments) <= parts
    assert all(a[1] == b[0] for a, b in zip(segments, segments[1:])), "consecutive"
    for segment in segments:
        step = Trajectory(video, AgentBudget(max_frames_per_call=call_frames)).step(call_turn(*segment))
        assert step.error is None and step.observation is not None and step.observation.frames


def test_seeing_agent_names_the_colour_its_clip_shows(task_rows, tiny_tokenizer):
    """``see``: the answer turn names the colour the clip shows, read back from the clip's own pixels; the calls are
    the same as without ``see`` (where to look stays random). Tiled thirds of the task's 12-s videos at 1 fps: frames
    at 0-3, 4-7, 8-11 s, the squares at 0.5-3.5, 4.5-7.5, 8.5-11.5 s, so each clip shows its third's square only."""
    import numpy as np

    budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136)
    template = tiny_tokenizer.apply_chat_template
    seeing = agent_examples(task_rows, 24, template, budget=budget, tile=True, see=True)
    blind = agent_examples(task_rows, 24, template, budget=budget, tile=True)
    assert [e.response for e in seeing[::2]] == [e.response for e in blind[::2]], "the same calls"
    called = set()
    for call, answer in zip(seeing[::2], seeing[1::2]):
        segment = json.loads(call.response.split("<video_zoom>")[1].split("</video_zoom>")[0])["segment"]
        called.add(tuple(segment))
        clip = answer.images[len(call.images) :]
        assert len(clip) == 4, "4 s at 1 fps"
        colours = {dominant_color(np.asarray(image)) for image in clip} - {None}
        assert len(colours) == 1, f"one square in {segment}"
        letter = "ABCD"[TASK_COLORS.index(colours.pop())]
        assert answer.response == f"<think>seen</think><answer>{letter}</answer>"
    assert called == {(0, 4), (4, 8), (8, 12)}, "every third is called"
    # the default calls (all end at 12 s): only the last third's clip shows one square; the others keep their letter
    seeing = agent_examples(task_rows, 24, template, budget=budget, see=True)
    blind = agent_examples(task_rows, 24, template, budget=budget)
    for k in range(0, 24, 2):
        row = task_rows[(k // 2) % len(task_rows)]
        last = json.loads(row["answer"])[SQUARES_KEY][2][2]
        if '"segment": [8, 12]' in seeing[k].response:
            assert seeing[k + 1].response == f"<think>seen</think><answer>{'ABCD'[TASK_COLORS.index(last)]}</answer>"
        else:
            assert seeing[k + 1].response == blind[k + 1].response


def test_seen_answers_name_the_one_square_the_calls_stay_random(tmp_path, tiny_tokenizer):
    """Without distractors only the middle third shows a square: a random call's clip mostly shows none. With
    ``seen_answers=2`` each pair is followed by two answer turns after ``[4, 8]`` (the only one-colour clip), naming the
    square's colour; the pairs — the calls taught, and what follows each — are those made without it."""
    import numpy as np

    rows = read_rows(make_grounding_task(tmp_path, n_videos=3, seed=5, distractors=False))
    budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136)
    template = tiny_tokenizer.apply_chat_template
    extra = agent_examples(rows, 20, template, budget=budget, tile=True, see=True, seen_answers=2)
    plain = agent_examples(rows, 10, template, budget=budget, tile=True, see=True)
    pairs = [e for k, e in enumerate(extra) if k % 4 < 2]
    assert [(e.prompt, e.response) for e in pairs] == [(e.prompt, e.response) for e in plain]
    for k in range(0, 20, 4):
        row = rows[(k // 4) % len(rows)]
        ((_, _, colour),) = json.loads(row["answer"])[SQUARES_KEY]
        for answer in extra[k + 2 : k + 4]:
            assert '"segment": [4, 8]' in answer.prompt.split("<|im_start|>assistant\n")[1]
            clip = answer.images[len(extra[k].images) :]
            assert {dominant_color(np.asarray(image)) for image in clip} - {None} == {colour}
            assert answer.response == f"<think>seen</think><answer>{'ABCD'[TASK_COLORS.index(colour)]}</answer>"


def test_a_quarter_fps_overview_falls_between_the_squares(task_rows, tiny_tokenizer):
    """The VideoZoomer learning curve's overview (``overview_fps=0.25``): frames at 0, 4 and 8 s, each in a gap
    between squares (0.5-3.5, 4.5-7.5, 8.5-11.5 s), so no colour is seen before a call; at 0.5 fps the frames at 2, 6
    and 10 s show all three."""
    import numpy as np

    for fps, seen in ((0.25, set()), (0.5, None)):
        budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136, overview_fps=fps)
        for row in task_rows:
            (call, _) = agent_examples([row], 2, tiny_tokenizer.apply_chat_template, budget=budget)
            colours = {dominant_color(np.asarray(image)) for image in call.images} - {None}
            squares = {s[2] for s in json.loads(row["answer"])[SQUARES_KEY]}
            assert len(call.images) == int(12 * fps) and colours == (squares if seen is None else seen)


def test_seeing_needs_the_squares(tmp_path, tiny_tokenizer):
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    rows = read_rows(make_benchmark(tmp_path, n_videos=1))
    with pytest.raises(ValueError, match="squares"):
        agent_examples(rows, 2, tiny_tokenizer.apply_chat_template, tile=True, see=True)


def test_agent_examples_are_the_rollouts_two_turns(task_rows, tiny_tokenizer):
    budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136)
    examples = agent_examples(task_rows, 4, tiny_tokenizer.apply_chat_template, budget=budget)
    call, answer = examples[0], examples[1]
    assert "<video_zoom>" in call.response and answer.response.endswith("</answer>")
    assert answer.prompt.startswith(call.prompt + call.response + "<|im_end|>"), "the second turn follows the first"
    assert answer.prompt.endswith("<|im_start|>assistant\n")
    assert call.prompt.count("<|image_pad|>") == len(call.images) == 6, "12 s at 0.5 fps"
    assert answer.prompt.count("<|image_pad|>") == len(answer.images) > len(call.images), "the clip's frames"
    assert answer.images[:6] == call.images, "decoded once, shared"


def test_shared_prefix_stops_before_media_and_labels():
    encoded = [
        {"input_ids": [1, 2, 3, 9, 5, 6], "labels": [-100] * 5 + [6]},
        {"input_ids": [1, 2, 3, 4, 7], "labels": [-100] * 4 + [7]},
    ]
    assert shared_prefix(encoded, [99]) == 3
    assert shared_prefix(encoded, [2]) == 1, "never into an image or video token"
    encoded[1]["labels"] = [-100, 2, 3, 4, 7]
    assert shared_prefix(encoded, [99]) == 1, "never into a label"


def test_the_prefix_cache_leaves_the_loss_as_it_is(task_rows, tiny_processor, tiny_model):
    """The batch's loss with its shared prefix run once as a cache equals the loss of the whole sequences (the agent's
    prompts: system prompt, overview frames, a clip). Gradients differ only by what flows into the prefix."""
    budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136)
    examples = agent_examples(task_rows, 4, tiny_processor.tokenizer.apply_chat_template, budget=budget)
    encoded = _encode(tiny_processor, examples)
    tokens = tiny_processor.tokenizer.convert_tokens_to_ids([tiny_processor.image_token, tiny_processor.video_token])
    skip = shared_prefix(encoded, tokens)
    assert skip > 500, "the system prompt is shared"
    pad = tiny_processor.tokenizer.pad_token_id
    whole = _loss(tiny_model, _batch(encoded, pad), [])
    cached = _loss(tiny_model, _batch(encoded, pad, skip), encoded[0]["input_ids"][:skip])
    assert cached.item() == pytest.approx(whole.item(), rel=1e-5)


@pytest.mark.parametrize("schedule, moved", [("constant", True), ("cosine", False)])
def test_one_cosine_step_is_its_warm_up_at_rate_zero(schedule, moved, task_rows, tiny_processor, tiny_model_dir):
    """One step: at a constant 3e-3 every weight moves; the cosine schedule's warm-up is max(1, 1 // 20) = 1 step,
    whose rate is 0/1 of 3e-3 = 0 (gradients clipped or not, AdamW moves nothing: no weight decay)."""
    import torch
    from transformers import AutoModelForImageTextToText

    budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136)
    examples = agent_examples(task_rows, 2, tiny_processor.tokenizer.apply_chat_template, budget=budget)
    before = AutoModelForImageTextToText.from_pretrained(tiny_model_dir, dtype=torch.float32).state_dict()
    after = train_steps(tiny_model_dir, tiny_processor, examples, 1, 2, 3e-3, 0, schedule).state_dict()
    head = "lm_head.weight"
    assert (not torch.equal(before[head], after[head])) is moved
    assert all(torch.equal(before[k], after[k]) for k in before) is not moved


def test_an_unknown_schedule_is_refused(tmp_path, task_rows, tiny_model_dir):
    with pytest.raises(ValueError, match="schedule must be one of"):
        warm_start(tiny_model_dir, tmp_path / "out", task_rows, "agent", schedule="linear")


def test_grounded_examples_show_the_videos_as_the_rollout_does(task_rows):
    """The coarse pass shows the whole 12-s video at data.video_fps 1.0: 12 frames, each at most data.max_pixels
    (12,544 = 4 tokens of 28 px) on Qwen2.5-VL's 28-px grid; the zoom pass (see=True) a clip of one square."""
    from zoomzero_plugin.gvqa.zoom import ZoomBudget
    from zoomzero_plugin.synthetic.warm_start import VideoInput, grounded_examples

    shown = VideoInput(
        fps=1.0,
        min_pixels=3136,
        max_pixels=12544,
        zoom=ZoomBudget(max_visual_tokens=256, fps=2.0, min_frame_pixels=3136, max_frame_pixels=50176),
    )
    coarse, zoom = grounded_examples(task_rows, 2, lambda m, **_: m[0]["content"], shown=shown, see=True)
    frames = coarse.videos[0]
    assert frames.shape[0] == 12 and coarse.video_fps == (pytest.approx(1.0),)
    height, width = frames.shape[-2:]
    assert height % 28 == 0 and width % 28 == 0 and height * width <= 12544
    assert zoom.videos[0].shape[0] >= 2 and zoom.response in "ABCD"


@given(st.integers(0, 2**32), st.sampled_from([3.0, 9.5, 12.0, 600.0]))
@settings(max_examples=80, deadline=None)
def test_whole_second_spans_are_one_valid_citation(seed, duration):
    """whole_seconds: one span, in <glue> only, of whole seconds inside the video, 1 .. floor(duration / 3) long
    (12 s: starts 0..11, lengths 1..4, so the longest from 11 is clamped to (11, 12)); the response has the
    template's shape."""
    import random

    from zoomzero_plugin.gvqa.parsing import parse_response

    truth = GroundTruth(answer="A", options=("a", "b", "c", "d"), spans=((1.0, 2.0),), duration=duration, qid="q")
    text = grounded_response(random.Random(seed), truth, whole_seconds=True)
    assert "<time>" not in text
    glue = text.split("<glue>[(")[1].split(")]</glue>")[0]
    start, end = (int(x) for x in glue.split(", "))  # whole numbers: int() would refuse "4.0"
    longest = max(1, int(duration // 3))
    assert 0 <= start <= int(duration) - 1 and start < end <= int(duration)
    assert end - start <= longest
    parsed = parse_response(text, duration)
    assert parsed.format_ok and parsed.spans == ((float(start), float(end)),) and parsed.answer in "ABCD"


@pytest.mark.parametrize(
    "duration, starts, lengths, spans_at_the_end",
    [
        (12.0, range(12), {1, 2, 3, 4}, {(11, 12), (10, 12), (9, 12)}),  # 12 / 3 = 4 exactly
        (11.0, range(11), {1, 2, 3}, {(10, 11), (9, 11)}),  # 11 / 3 = 3.67: floored to 3, not rounded to 4
        (0.6, range(1), {1}, {(0, 1)}),  # under a second: the one whole second, clamped to the video when parsed
    ],
)
def test_whole_second_spans_cover_every_start_and_length(duration, starts, lengths, spans_at_the_end):
    """Over many draws every start 0 .. L - 1 and every length 1 .. floor(duration / 3) appears (L the last whole
    second, at least 1), and nothing else; no span ends past L."""
    import random

    truth = GroundTruth(answer="A", options=("a", "b"), spans=((0.0, 0.5),), duration=duration, qid="q")
    rng = random.Random(0)
    spans = set()
    for _ in range(2000):
        glue = grounded_response(rng, truth, whole_seconds=True).split("<glue>[(")[1].split(")]")[0]
        spans.add(tuple(int(x) for x in glue.split(", ")))
    last = max(1, int(duration))
    assert {s for s, _ in spans} == set(starts)
    assert {e - s for s, e in spans} == lengths
    assert spans_at_the_end <= spans and not any(e > last for _, e in spans)


def test_a_video_under_a_second_gets_the_span_0_1_which_reads_as_the_whole_video():
    """(0, 0), the end clamped to the last whole second, would be zero-length: an invalid span, format 0, no glue.
    (0, 1) is the one whole-second span there is; the parser clamps it to the video: (0, 0.6)."""
    import random

    from zoomzero_plugin.gvqa.parsing import parse_response

    truth = GroundTruth(answer="A", options=("a", "b"), spans=((0.0, 0.5),), duration=0.6, qid="q")
    text = grounded_response(random.Random(1), truth, whole_seconds=True)
    assert text.endswith("<glue>[(0, 1)]</glue>")
    parsed = parse_response(text, 0.6)
    assert parsed.format_ok and parsed.spans == ((0.0, 0.6),)
    assert not parse_response(text.replace("(0, 1)", "(0, 0)"), 0.6).format_ok


@pytest.fixture(scope="module")
def tiny_qwen3_model(tiny_qwen3_dir):
    from transformers import Qwen3VLForConditionalGeneration

    return Qwen3VLForConditionalGeneration.from_pretrained(tiny_qwen3_dir).eval()


def test_qwen3_examples_show_each_video_with_its_timestamps(task_rows, tiny_qwen3_processor):
    """Qwen3-VL writes a timestamp before each temporal patch: the coarse pass's 12 frames over 12 s are 6 patches
    whose times run from under 1 s to over 10 s (a pair's time is its frames' mean), each followed by its pads."""
    from zoomzero_plugin.gvqa.zoom import ZoomBudget
    from zoomzero_plugin.synthetic.warm_start import VideoInput, grounded_examples
    from zoomzero_plugin.vision import VisionGeometry

    processor = tiny_qwen3_processor
    zoom = ZoomBudget(max_visual_tokens=256, fps=2.0, min_frame_pixels=4096, max_frame_pixels=65536)
    shown = VideoInput(
        fps=1.0, min_pixels=4096, max_pixels=16384, zoom=zoom.with_geometry(VisionGeometry.of(processor))
    )
    coarse = grounded_examples(task_rows, 1, processor.tokenizer.apply_chat_template, shown=shown)[0]
    assert coarse.videos[0].shape[0] == 12 and len(coarse.video_metadata) == 1
    ids = _encode(processor, [coarse])[0]["input_ids"]
    text = processor.tokenizer.decode(ids)
    stamps = [float(t) for t in re.findall(r"<(\d+\.\d) seconds>", text)]
    assert len(stamps) == 6 and stamps == sorted(stamps) and stamps[0] < 1.0 and stamps[-1] > 10.0, stamps


def test_agent_clips_as_video_are_one_padded_video_after_the_overview(task_rows, tiny_qwen3_processor):
    budget = AgentBudget(max_frame_pixels=16384, min_frame_pixels=4096)
    template = tiny_qwen3_processor.tokenizer.apply_chat_template
    call, answer = agent_examples(task_rows, 2, template, budget=budget, clip_as="video")
    assert answer.images == call.images and len(answer.videos) == 1, "the overview as images, the clip as a video"
    frames, metadata = answer.videos[0], answer.video_metadata[0]
    assert frames.shape[0] % 2 == 0 and len(metadata["frames_indices"]) == frames.shape[0], "whole temporal patches"
    assert answer.prompt.count("<|video_pad|>") == 1 and "<clip_time" in answer.prompt
    indices = metadata["frames_indices"]
    assert indices == sorted(indices) and metadata["fps"] == pytest.approx(4.0), "native indices of the 4-fps file"


def test_the_prefix_cache_leaves_a_qwen3_vl_loss_as_it_is(task_rows, tiny_qwen3_processor, tiny_qwen3_model):
    """The same on Qwen3-VL with clips as one video: its M-RoPE (no seconds per patch, timestamps in the text)."""
    processor = tiny_qwen3_processor
    budget = AgentBudget(max_frame_pixels=16384, min_frame_pixels=4096)
    examples = agent_examples(task_rows, 4, processor.tokenizer.apply_chat_template, budget=budget, clip_as="video")
    encoded = _encode(processor, examples)
    assert all("second_per_grid_ts" not in e for e in encoded) and any("video_grid_thw" in e for e in encoded)
    skip = shared_prefix(
        encoded, processor.tokenizer.convert_tokens_to_ids([processor.image_token, processor.video_token])
    )
    pad = processor.tokenizer.pad_token_id
    whole = _loss(tiny_qwen3_model, _batch(encoded, pad), [])
    cached = _loss(tiny_qwen3_model, _batch(encoded, pad, skip), encoded[0]["input_ids"][:skip])
    assert skip > 500 and cached.item() == pytest.approx(whole.item(), rel=1e-5)


def test_the_runs_of_consecutive_thirds():
    """A 12-s video in thirds at 1 fps, 16 frames a call: every run of consecutive thirds; with 8 frames a call the
    whole video (12 s at 1 fps) no longer fits; dense: the highest whole fps of each run (16 // 8 = 2, 16 // 12 = 1)."""
    thirds = call_segments(12.0, 16, tile=True)
    assert thirds == [(0, 4, 1), (4, 8, 1), (8, 12, 1)]
    runs = [(0, 4, 1), (0, 8, 1), (0, 12, 1), (4, 8, 1), (4, 12, 1), (8, 12, 1)]
    assert tile_unions(thirds, 16) == runs
    assert tile_unions(thirds, 8) == [r for r in runs if r[:2] != (0, 12)]
    assert tile_unions(thirds, 16, dense=True) == [(0, 4, 4), (0, 8, 2), (0, 12, 1), (4, 8, 4), (4, 12, 2), (8, 12, 4)]


def test_seen_answers_after_runs_of_thirds_the_calls_stay_random(tmp_path, tiny_tokenizer):
    """``unions``: the seen answers follow calls on runs of consecutive thirds whose clip shows the one square (4.5-7.5
    s): [0, 8], [0, 12], [4, 8], [4, 12] — never [0, 4] or [8, 12], which show none; the pairs are unchanged."""
    import numpy as np

    rows = read_rows(make_grounding_task(tmp_path, n_videos=3, seed=5, distractors=False))
    budget = AgentBudget(max_frame_pixels=12544, min_frame_pixels=3136)
    template = tiny_tokenizer.apply_chat_template
    extra = agent_examples(rows, 40, template, budget=budget, tile=True, see=True, seen_answers=2, unions=True)
    plain = agent_examples(rows, 20, template, budget=budget, tile=True, see=True)
    pairs = [e for k, e in enumerate(extra) if k % 4 < 2]
    assert [(e.prompt, e.response) for e in pairs] == [(e.prompt, e.response) for e in plain]
    called = set()
    for k in range(0, 40, 4):
        row = rows[(k // 4) % len(rows)]
        ((_, _, colour),) = json.loads(row["answer"])[SQUARES_KEY]
        for answer in extra[k + 2 : k + 4]:
            call = answer.prompt.split("<|im_start|>assistant\n")[1]
            segment = tuple(json.loads(call[call.index("{") : call.index("}") + 1])["segment"])
            called.add(segment)
            clip = answer.images[len(extra[k].images) :]
            assert len(clip) == segment[1] - segment[0], "1 fps"
            assert {dominant_color(np.asarray(image)) for image in clip} - {None} == {colour}
            assert answer.response == f"<think>seen</think><answer>{'ABCD'[TASK_COLORS.index(colour)]}</answer>"
    assert called <= {(0, 8), (0, 12), (4, 8), (4, 12)} and len(called) >= 3, called
    with pytest.raises(ValueError, match="unions needs tile"):
        agent_examples(rows, 2, template, budget=budget, see=True, seen_answers=2, unions=True)
