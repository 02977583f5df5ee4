"""``zoomzero eval --backend vllm`` on vLLM's CPU engine, every mode, against ``--backend transformers``, on the tiny
Qwen2.5-VL and the tiny Qwen3-VL (its 32-px tokens, its frame timestamps from the clips' absolute times).

Both backends serve the same tiny checkpoint. Grounding passes (coarse, window, refine) are scripted with the
same words on both sides (:class:`ScriptedBackend`: the random model never writes a valid span), so the fine
passes read the same spans; what the fine passes answer, and with what letter probability, is each engine's
own. One engine for the module: the CLI's ``load_backend`` is pointed at it.

Tolerance: letter probabilities agree to 1e-3 (absolute). Measured in float32: at most 2.2e-5 on p ~ 0.0022, i.e.
~1% relative, which is the mass of the vision placeholder tokens: transformers renormalises without them (it
suppresses them), vLLM reports raw full-vocabulary log-probs. Frames, frame sizes and video tokens are equal;
greedy texts of an unscripted one-stage run are equal.
"""

from __future__ import annotations

import json

import pytest

from zoomzero_plugin.commands.cli import main as zoomzero
from zoomzero_plugin.eval import runner
from zoomzero_plugin.inference.scripted import ScriptedBackend, template
from zoomzero_plugin.synthetic.benchmark import make_benchmark

MODES = ("one-stage", "coarse-to-fine", "divide-and-conquer", "iterative")
FLAGS = [
    "--benchmark",
    "rows",
    "--max-visual-tokens",
    "64",
    "--min-frame-pixels",
    "3136",
    "--max-new-tokens",
    "12",
    "--window-seconds",
    "4",
    "--no-progress",
    "--batch-size",
    "4",
]
TOLERANCE = 1e-3


def script(request, k):
    """Grounding passes answer B and ground (1, 3) s (inside every 4-s window too); fine passes are the model's."""
    return None if request.choices else (template("B", [(1.0, 3.0)]), 0.5)


FAMILIES = {"qwen2_5_vl": "vllm_model_dir", "qwen3_vl": "tiny_qwen3_dir"}  # the tiny models vLLM's CPU engine serves


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def backends(request):
    import gc

    from zoomzero_plugin.inference.hf_backend import TransformersBackend
    from zoomzero_plugin.inference.vllm_backend import VLLMBackend

    model_dir = request.getfixturevalue(FAMILIES[request.param])
    vllm = VLLMBackend(str(model_dir), batch_size=8, max_images=128, enforce_eager=True, max_model_len=8192, seed=0)
    hf = TransformersBackend(str(model_dir), device="cpu", batch_size=8)
    yield {"vllm": vllm, "transformers": hf, "family": request.param}
    vllm.shutdown()
    del hf
    gc.collect()


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return make_benchmark(tmp_path_factory.mktemp("bench"), n_videos=3, seed=3)


def run_eval(monkeypatch, backends, backend, mode, rows, out, scripted=True):
    chosen = ScriptedBackend(backends[backend], script) if scripted else backends[backend]
    # the name `zoomzero eval` calls (eval.runner's own binding: patching inference.backend's would reach only the
    # first run, whose runner import then kept that run's backend for every later test)
    monkeypatch.setattr(runner, "load_backend", lambda name, model, **kw: chosen)
    args = ["eval", "--backend", backend, "--mode", mode, "--model", "tiny", "--data", str(rows), "--out", str(out)]
    assert zoomzero(args + FLAGS) == 0
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def same_pass(a, b):
    keys = ("pass", "clips", "frame_pixels", "frames", "video_tokens", "decoded", "answer", "spans")
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    if a["confidence"] is None or b["confidence"] is None:
        assert a["confidence"] == b["confidence"]
    else:
        assert a["confidence"] == pytest.approx(b["confidence"], abs=TOLERANCE)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_matches_transformers(monkeypatch, backends, rows, tmp_path, mode):
    got = run_eval(monkeypatch, backends, "vllm", mode, rows, tmp_path / "vllm")
    want = run_eval(monkeypatch, backends, "transformers", mode, rows, tmp_path / "hf")
    assert [r["qid"] for r in got] == [r["qid"] for r in want] and len(got) == 3
    for g, w in zip(got, want):
        assert g["answer"] == w["answer"] and g["spans"] == w["spans"] and g["fallback"] == w["fallback"]
        assert [p["pass"] for p in g["passes"]] == [p["pass"] for p in w["passes"]]
        for a, b in zip(g["passes"], w["passes"]):
            same_pass(a, b)
    if mode != "one-stage":  # a fine pass ran on the scripted spans and scored the letters itself
        fine = [p for r in got for p in r["passes"] if p["pass"] == "fine"]
        assert len(fine) == 3 and all(0 < p["confidence"] <= 1 and p["answer"] in "ABCD" for p in fine)
    metrics = json.loads((tmp_path / "vllm" / "metrics.json").read_text())["metrics"]
    assert metrics["questions"] == 3 == metrics["predicted"]


def test_unscripted_greedy_text_matches_transformers(monkeypatch, backends, rows, tmp_path):
    got = run_eval(monkeypatch, backends, "vllm", "one-stage", rows, tmp_path / "vllm", scripted=False)
    want = run_eval(monkeypatch, backends, "transformers", "one-stage", rows, tmp_path / "hf", scripted=False)
    for g, w in zip(got, want):
        (a,), (b,) = g["passes"], w["passes"]
        assert a["texts"] == b["texts"] and a["video_tokens"] == b["video_tokens"] > 0


def test_backend_reads_what_the_engine_returns(backends, evidence_video):
    """Coarse, fine (two clips: one rate each) and letter-scored requests straight through both backends."""
    from tests.inference.test_backend import _coarse, _fine
    from zoomzero_plugin.inference.backend import SamplingParams

    vllm, hf = backends["vllm"], backends["transformers"]
    qwen3 = backends["family"] == "qwen3_vl"  # 16-px patches and timestamps, read from the processor
    assert vllm.geometry == hf.geometry and vllm.geometry.factor == (32 if qwen3 else 28)
    assert vllm.geometry.timestamps == qwen3
    requests = [_coarse(evidence_video), _fine(evidence_video), _fine(evidence_video, choices=("A", "B", "C"))]
    params = SamplingParams(max_new_tokens=6, logprobs=True)
    got, want = vllm.generate(requests, params), hf.generate(requests, params)
    for g, w in zip(got, want):
        assert g.text == w.text
        assert g.video_tokens == w.video_tokens > 0 and g.prompt_tokens == w.prompt_tokens
        assert [c.to_list() for c in g.clips] == [c.to_list() for c in w.clips]
        # raw full-vocabulary log-probs (vLLM) vs renormalised without the suppressed vision tokens (transformers):
        # they differ by the log of the vision tokens' mass, up to ~0.02 nats for this random model
        assert g.outputs[0].token_logprobs == pytest.approx(w.outputs[0].token_logprobs, abs=0.03)
        assert g.outputs[0].token_offsets == w.outputs[0].token_offsets
    chosen, scores = got[2].text, got[2].outputs[0].choice_logprobs
    assert set(scores) == {"A", "B", "C"} and chosen == want[2].text
    assert scores[chosen] == pytest.approx(want[2].outputs[0].choice_logprobs[chosen], abs=0.02)
    for letter, value in scores.items():  # another letter is read only when among vLLM's top 20 log-probs
        assert value == float("-inf") or value == pytest.approx(want[2].outputs[0].choice_logprobs[letter], abs=0.02)


@pytest.mark.parametrize("clip_as", ["images", "video"])
def test_agent_mode_runs_as_on_the_transformers_backend(backends, rows, clip_as):
    """VideoZoomer's agent loop (scripted words; frames as labelled images, resized by vLLM's HF processor; or each
    clip one video with its metadata and rate): the same records, and the same image and video tokens each round."""
    from dataclasses import replace

    from tests.inference.test_agent import CFG, scripted
    from zoomzero_plugin.inference.modes import predict
    from zoomzero_plugin.inference.passes import Question
    from zoomzero_plugin.rows import read_rows

    chosen = read_rows(rows)[:3]
    questions = [Question.from_row(r) for r in chosen]
    cfg = replace(CFG, agent=replace(CFG.agent, clip_as=clip_as))
    runs = {name: scripted(backends[name], chosen) for name in ("vllm", "transformers")}
    got, want = (predict(runs[name], questions, "agent", cfg) for name in ("vllm", "transformers"))
    assert [p.record for p in got] == [p.record for p in want]
    # by question and round: vLLM's turns come in the order they end (continuous schedule), transformers' by round
    tokens = {
        name: sorted((r.tag, g.image_tokens, g.video_tokens, g.prompt_tokens) for r, g in run.calls)
        for name, run in runs.items()
    }
    assert tokens["vllm"] == tokens["transformers"]
    assert any(v > 0 for _, _, v, _ in tokens["vllm"]) == (clip_as == "video")


def test_no_tool_baseline_runs_as_on_the_transformers_backend(backends, rows):
    """The no-tool baseline: the frames as one video with no rate, resized by each engine's HF processor; the same
    prompt and the same video tokens (unscripted, greedy: the same words too). The authors' baseline of their
    Qwen2.5-VL checkpoint: frames without timing, which Qwen3-VL's processors refuse to time."""
    if backends["family"] != "qwen2_5_vl":
        pytest.skip("the no-tool baseline sends untimed frames (the authors' Qwen2.5-VL setting)")
    from dataclasses import replace

    from zoomzero_plugin.agent.baseline import NO_TOOL_BUDGET
    from zoomzero_plugin.inference.agent import AgentConfig
    from zoomzero_plugin.inference.backend import Request, SamplingParams
    from zoomzero_plugin.inference.modes import ModeConfig, predict
    from zoomzero_plugin.inference.passes import Question
    from zoomzero_plugin.rows import read_rows

    questions = [Question.from_row(r) for r in read_rows(rows)[:2]]
    budget = replace(NO_TOOL_BUDGET, max_new_tokens=8, max_response_tokens=8)
    cfg = ModeConfig(agent=AgentConfig(budget=budget, tool=False))
    got = predict(backends["vllm"], questions, "agent", cfg)
    want = predict(backends["transformers"], questions, "agent", cfg)
    assert [p.record for p in got] == [p.record for p in want]
    from PIL import Image

    prompt = "<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>Q<|im_end|>\n<|im_start|>assistant\n"
    request = Request(prompt, frames=tuple(Image.new("RGB", (224, 168)) for _ in range(3)), formatted=True)
    counts = [
        backends[b].generate([request], SamplingParams(max_new_tokens=1))[0].video_tokens
        for b in ("vllm", "transformers")
    ]
    assert counts[0] == counts[1] > 0


def test_generation_stops_where_the_engine_stops(backends):
    from zoomzero_plugin.inference.backend import Request, SamplingParams

    if backends["family"] != "qwen2_5_vl":
        pytest.skip("text only: one family suffices")
    backend = backends["vllm"]
    request = Request("What is this? Answer in words.")
    free = backend.generate([request], SamplingParams(max_new_tokens=8))[0].text
    stop = free[2:4]
    cut = backend.generate([request], SamplingParams(max_new_tokens=8, stop=(stop,)))[0].text
    assert cut == free[: free.find(stop) + len(stop)]
