"""The agent mode on the real transformers backend and the tiny model, with scripted words (the random model never
writes a call): frames, observations, batching by round, budgets, and ``zoomzero eval --mode agent``."""

import json
from dataclasses import replace

import pytest
from PIL import Image

from zoomzero_plugin.agent import AgentBudget
from zoomzero_plugin.agent.baseline import NO_TOOL_BUDGET
from zoomzero_plugin.agent.render import QWEN_IMAGE
from zoomzero_plugin.eval.runner import evaluate
from zoomzero_plugin.inference.agent import AgentConfig
from zoomzero_plugin.inference.backend import Request, SamplingParams
from zoomzero_plugin.inference.modes import ModeConfig, predict
from zoomzero_plugin.inference.passes import Question
from zoomzero_plugin.rows import read_rows, row_truth

from .conftest import ScriptedBackend

CFG = ModeConfig(agent=AgentConfig(budget=AgentBudget(max_new_tokens=16)))


def call(s, e, fps):
    return f'<think>look</think><video_zoom>{{"segment": [{s}, {e}], "fps": {fps}}}</video_zoom>'


def answer(letter):
    return f"<think>seen</think><answer>{letter}</answer>"


def wrong(letter):
    return "A" if letter != "A" else "B"


class Batches:
    """A backend wrapper recording the size of every generate call."""

    def __init__(self, inner, stop=("</video_zoom>",), max_new_tokens=16):
        self.inner, self.sizes = inner, []
        self.name, self.geometry, self.tokenizer = "batches", inner.geometry, inner.tokenizer
        self.processor = getattr(inner, "processor", None)
        self.stop, self.max_new_tokens = stop, max_new_tokens

    def generate(self, requests, params):
        self.sizes.append(len(requests))
        assert params.stop == self.stop and params.max_new_tokens == self.max_new_tokens
        return self.inner.generate(requests, params)


def scripts(rows):
    """qid -> the turns it says: answer at once; one call then answer; an error, a call, then a wrong answer."""
    truths = [row_truth(r) for r in rows[:3]]
    return {
        truths[0].qid: [answer(truths[0].answer)],
        truths[1].qid: [call(2, 4, 2), answer(truths[1].answer)],
        truths[2].qid: [call(20, 22, 1), call(1, 2, 4), answer(wrong(truths[2].answer))],
    }


def scripted(backend, rows):
    said = scripts(rows)

    def script(request, k):
        qid, round_ = request.tag.split("#")
        return said[qid][int(round_)]

    return ScriptedBackend(backend, script)


def test_agent_runs_each_round_as_one_batch(tiny_backend, bench_rows):
    rows = read_rows(bench_rows)[:3]
    backend = Batches(scripted(tiny_backend, rows))
    preds = predict(backend, [Question.from_row(r) for r in rows], "agent", CFG)
    assert backend.sizes == [3, 2, 1]  # one generate per round over the trajectories still going
    first, second, third = (p.record for p in preds)
    assert first["end"] == "answer" and first["answer"] == row_truth(rows[0]).answer and first["calls"] == 0
    # 12 s at 4 fps: overview every 8th frame; [2, 4] at 2 fps -> linspace(8, 16, 4) -> frames 8, 10, 13, 16
    t = second["transcript"]
    assert t["overview"]["times"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert t["turns"][0]["clip"] == {"frames": [8, 10, 13, 16], "times": [2.0, 2.5, 3.25, 4.0]}
    assert second["frames"] == 10 and second["answer"] == row_truth(rows[1]).answer
    t = third["transcript"]
    assert [turn["error"]["code"] if turn["error"] else None for turn in t["turns"]] == ["outside_video", None, None]
    assert t["turns"][1]["clip"]["times"] == [1.0, 1.25, 1.5, 2.0]  # [1, 2] at 4 fps -> frames 4, 5, 6, 8
    assert (third["calls"], third["errors"], third["end"]) == (1, 1, "answer")
    assert third["answer"] == wrong(row_truth(rows[2]).answer)
    assert all(p.timing["total_s"] > 0 for p in preds)


def test_every_round_sends_the_whole_conversation_and_its_images(tiny_backend, bench_rows):
    rows = read_rows(bench_rows)[:3]
    backend = scripted(tiny_backend, rows)
    predict(backend, [Question.from_row(r) for r in rows], "agent", CFG)
    by_tag = {request.tag: (request, gen) for request, gen in backend.calls}
    qid = row_truth(rows[1]).qid
    first, later = by_tag[f"{qid}#0"][0], by_tag[f"{qid}#1"][0]
    assert first.formatted and len(first.images) == 6 and first.prompt.count(QWEN_IMAGE) == 6
    assert first.prompt.startswith("<|im_start|>system\nYou are a helpful assistant. You will receive")
    assert "<frame5_time10.00s>" + QWEN_IMAGE + "Question: " in first.prompt
    assert len(later.images) == 10 and later.prompt.startswith(first.prompt)
    assert later.prompt[len(first.prompt) :].startswith(call(2, 4, 2) + "<|im_end|><|im_start|>user\n<tool_response>")
    assert later.prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
    _, gen = by_tag[f"{qid}#1"]
    assert gen.image_tokens == 10 * (224 // 28) * (168 // 28)  # 224x168 frames are kept: 48 tokens each


def test_the_total_token_budget_ends_a_trajectory(tiny_backend, bench_rows):
    rows = read_rows(bench_rows)[1:2]
    cfg = ModeConfig(agent=AgentConfig(budget=AgentBudget(max_new_tokens=64, max_response_tokens=100)))
    (pred,) = predict(scripted(tiny_backend, read_rows(bench_rows)), [Question.from_row(r) for r in rows], "agent", cfg)
    turns = pred.record["transcript"]["turns"]
    assert pred.record["end"] == "total_tokens" and len(turns) == 1 and turns[0]["clip"] is not None
    cfg = ModeConfig(agent=AgentConfig(budget=AgentBudget(max_new_tokens=10, max_response_tokens=10)))
    (pred,) = predict(scripted(tiny_backend, read_rows(bench_rows)), [Question.from_row(r) for r in rows], "agent", cfg)
    (turn,) = pred.record["transcript"]["turns"]
    assert pred.record["end"] == "total_tokens" and turn["tokens"] == 10 and turn["kind"] == "none"


def test_the_transformers_backend_stops_at_a_stop_string(tiny_backend):
    # sampled (seeded) text: the random model's greedy output is whitespace, which could match across the prompt
    request, params = Request("What is this? Answer in words."), SamplingParams(max_new_tokens=16, temperature=1.0)
    free = tiny_backend.generate([request], params)[0].outputs[0]
    stop = free.text[6:9]
    assert len(free.text) >= 12 and stop.strip() == stop and stop
    cut = tiny_backend.generate([request], SamplingParams(max_new_tokens=16, temperature=1.0, stop=(stop,)))
    cut = cut[0].outputs[0]  # the same samples up to the stop string, then nothing
    end = free.text.find(stop) + len(stop)
    assert cut.text == free.text[:end] and len(cut.token_ids) <= len(free.token_ids)
    assert cut.token_ids == free.token_ids[: len(cut.token_ids)]


def test_eval_mode_agent_writes_tool_statistics(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)[:3]
    metrics = evaluate(
        scripted(tiny_backend, rows),
        rows,
        tmp_path,
        benchmark="rows",
        mode="agent",
        cfg=CFG,
        batch_size=3,
        progress=False,
    )
    assert metrics["Acc"] == pytest.approx(200 / 3)  # two of three answered right
    records = [json.loads(line) for line in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert all("transcript" in r for r in records)
    agent = json.loads((tmp_path / "metrics.json").read_text())["agent"]
    assert agent["calls_histogram"] == {"0": 1, "1": 2} and agent["mean_calls"] == pytest.approx(2 / 3)
    assert agent["call_turns"] == 3 and agent["error_turns"] == 1 and agent["error_rate"] == pytest.approx(100 / 3)
    assert [(b["label"], b["n"], b["value"]) for b in agent["accuracy_by_calls"]] == [("0", 1, 100.0), ("1", 2, 50.0)]
    assert agent["errors_by_code"] == {"outside_video": 1} and agent["ends"] == {"answer": 3}
    assert agent["clip_frames_histogram"] == {"0": 1, "4": 2}
    report = (tmp_path / "report.md").read_text()
    assert "## Tool use (agent)" in report and "### Accuracy by number of calls" in report
    for png in ("agent_calls.png", "agent_accuracy_by_calls.png", "agent_frames.png", "agent_errors.png"):
        assert (tmp_path / png).stat().st_size > 1000 and f"]({png})" in report
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["config"]["agent"]["budget"]["max_assistant_turns"] == 5 and run["config"]["agent"]["prompt"] == "eval"


def test_agent_config_is_validated():
    with pytest.raises(ValueError, match="unknown agent prompt variant"):
        AgentConfig(prompt="chat")
    with pytest.raises(ValueError, match="temperature"):
        AgentConfig(temperature=-1.0)


def no_tool_script(rows, replies):
    """qid -> the one reply of the no-tool baseline (its requests are tagged with the bare qid)."""
    said = dict(zip((row_truth(r).qid for r in rows), replies))

    def script(request, k):
        assert "#" not in request.tag
        return said[request.tag]

    return said, script


def test_the_no_tool_baseline_reads_the_video_as_one_video(tiny_backend, bench_rows):
    rows = read_rows(bench_rows)[:3]
    truths = [row_truth(r) for r in rows]
    replies = [
        f"{truths[0].answer}. The cup.",
        f"<think>red</think><answer>\\boxed{{{truths[1].answer}}}</answer>",
        "I cannot tell.",
    ]
    _, script = no_tool_script(rows, replies)
    scripted_ = ScriptedBackend(tiny_backend, script)
    backend = Batches(scripted_, stop=(), max_new_tokens=16)
    budget = replace(NO_TOOL_BUDGET, max_new_tokens=16, max_response_tokens=16)
    cfg = ModeConfig(agent=AgentConfig(budget=budget, tool=False))
    preds = predict(backend, [Question.from_row(r) for r in rows], "agent", cfg)
    assert backend.sizes == [3]  # one generate for every question
    request = scripted_.calls[0][0]
    assert request.formatted and not request.images and len(request.frames) == 3
    assert request.prompt.startswith(
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        "<|vision_start|><|video_pad|><|vision_end|>Question: "
    )
    assert request.prompt.endswith("<|im_end|>\n<|im_start|>assistant\n") and "<frame" not in request.prompt
    first, second, third = (p.record for p in preds)
    # 12 s at 4 fps, every round(4 / 0.2) = 20th frame: 0, 20, 40 -> 0, 5, 10 s
    assert first["transcript"]["overview"] == {"frames": [0, 20, 40], "times": [0.0, 5.0, 10.0]}
    assert first["transcript"]["prompt"] == "notool" and first["tool"] is False
    assert (first["answer"], first["end"], first["frames"], first["calls"]) == (truths[0].answer, "answer", 3, 0)
    assert second["answer"] == truths[1].answer
    assert (third["answer"], third["end"], third["transcript"]["turns"][0]["kind"]) == (None, "no_answer", "none")


def test_the_no_tool_video_costs_the_processors_video_tokens(tiny_backend):
    prompt = "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Q<|im_end|>\n<|im_start|>assistant\n"
    frames = tuple(Image.new("RGB", (224, 168)) for _ in range(3))
    gen = tiny_backend.generate([Request(prompt, frames=frames, formatted=True)], SamplingParams(max_new_tokens=2))[0]
    # the processor resizes the frames by its own rule: the tiny model keeps transformers' default video bounds
    # (>= 100,352 px), so 224x168 (37,632 px) grows by sqrt(100352 / 37632) = 1.633 and each side is rounded up to
    # 28 px: 392x280 = 14 x 10 tokens; 3 frames padded to 4 = 2 temporal pairs
    assert gen.video_tokens == 2 * 14 * 10 and gen.image_tokens == 0


def test_no_tool_sampling_has_no_stop_string():
    params = AgentConfig.no_tool().sampling()
    assert params.stop == () and params.max_new_tokens == 2048 and params.temperature == 0.0


def test_eval_no_tool_reports_the_baseline(tiny_backend, bench_rows, tmp_path):
    rows = read_rows(bench_rows)[:3]
    truths = [row_truth(r) for r in rows]
    _, script = no_tool_script(rows, [f"({truths[0].answer}) yes", f"{wrong(truths[1].answer)}.", "hmm"])
    budget = replace(NO_TOOL_BUDGET, max_new_tokens=8, max_response_tokens=8)
    cfg = ModeConfig(agent=AgentConfig(budget=budget, tool=False))
    metrics = evaluate(
        ScriptedBackend(tiny_backend, script),
        rows,
        tmp_path,
        benchmark="rows",
        mode="agent",
        cfg=cfg,
        batch_size=3,
        progress=False,
    )
    assert metrics["Acc"] == pytest.approx(100 / 3)  # one of three right
    agent = json.loads((tmp_path / "metrics.json").read_text())["agent"]
    assert agent["tool"] is False and agent["mean_images"] == 3 and agent["ends"] == {"answer": 2, "no_answer": 1}
    report = (tmp_path / "report.md").read_text()
    assert "## No tool (VideoZoomer's baseline)" in report and "## Tool use" not in report
    assert not (tmp_path / "agent_calls.png").exists()
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["config"]["agent"]["tool"] is False and run["config"]["agent"]["budget"]["overview_fps"] == 0.2


@pytest.mark.parametrize("clip_as", ["images", "video"])
def test_the_agent_on_the_tiny_qwen3_vl_costs_the_tokens_worked_by_hand(tiny_qwen3_dir, bench_rows, clip_as):
    """Qwen3-VL (16-px patches merged 2 x 2: 32-px tokens). A 224x168 frame is kept (37,632 px <= 100,352) and the
    processor rounds 168 -> 160 (5.25 -> 5 tokens) and 224 -> 224 (7): 35 tokens an image. The 6 overview images
    cost 210; the [2, 4] s clip at 2 fps (frames 8, 10, 13, 16 of 4 fps: 2.0, 2.5, 3.25, 4.0 s) 4 x 35 = 140 as
    images, or as one video 2 temporal patches x 35 = 70, announced by Qwen3-VL's own timestamp per patch, the mean
    time of its two frames: <2.2 seconds> (2.25) and <3.6 seconds> (3.625), the clip's absolute times."""
    from zoomzero_plugin.inference.hf_backend import TransformersBackend

    backend = TransformersBackend(str(tiny_qwen3_dir), device="cpu", batch_size=4)
    rows = read_rows(bench_rows)[:3]
    run = scripted(backend, rows)
    cfg = replace(CFG, agent=replace(CFG.agent, clip_as=clip_as))
    preds = predict(run, [Question.from_row(r) for r in rows], "agent", cfg)
    assert preds[1].record["answer"] == row_truth(rows[1]).answer
    by_tag = {request.tag: (request, gen) for request, gen in run.calls}
    request, gen = by_tag[f"{row_truth(rows[1]).qid}#1"]
    if clip_as == "images":
        assert (gen.image_tokens, gen.video_tokens) == (10 * 35, 0)
    else:
        assert (gen.image_tokens, gen.video_tokens) == (6 * 35, 2 * 35)
        inputs, _ = backend.prepare([request])
        text = backend.tokenizer.decode(inputs["input_ids"][0])
        assert "<clip_time2.00s-4.00s>\n" in text
        assert "<2.2 seconds>" in text and "<3.6 seconds>" in text and "<0.0 seconds>" not in text
