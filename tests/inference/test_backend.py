import importlib
import importlib.util
import math
import sys

import pytest
import torch

from zoomzero_plugin.errors import DependencyError
from zoomzero_plugin.gvqa.prompts import grounding_prompt, zoom_prompt
from zoomzero_plugin.gvqa.zoom import ZoomBudget, plan_coarse, plan_zoom
from zoomzero_plugin.inference.backend import Output, Request, SamplingParams, load_backend
from zoomzero_plugin.inference.passes import answer_confidence

from ..conftest import EVIDENCE_DURATION
from .conftest import SMALL

OPTIONS = ["red", "blue", "green", "yellow"]


def _coarse(video, budget=SMALL):
    return Request(
        grounding_prompt("What colour?", OPTIONS, EVIDENCE_DURATION),
        tuple(plan_coarse(EVIDENCE_DURATION, budget).video_elements(str(video))),
    )


def _fine(video, choices=()):
    plan = plan_zoom([(3.0, 5.0), (8.0, 9.5)], EVIDENCE_DURATION, SMALL)
    return Request(zoom_prompt("What colour?", OPTIONS), tuple(plan.video_elements(str(video))), choices=choices)


def test_token_logprobs_are_the_models_own(tiny_backend, evidence_video):
    """Greedy tokens are the argmax, and their log-probs equal a teacher-forced forward pass (without
    the suppressed vision tokens)."""
    request = _coarse(evidence_video)
    (gen,) = tiny_backend.generate([request], SamplingParams(max_new_tokens=12, logprobs=True))
    out = gen.outputs[0]
    assert len(out.token_ids) == len(out.token_logprobs) == 12
    inputs, _ = tiny_backend.prepare([request])
    ids = torch.cat([inputs["input_ids"], torch.tensor([out.token_ids])], dim=1)
    mask = torch.ones_like(ids)
    with torch.no_grad():
        logits = tiny_backend.model(**{**inputs, "input_ids": ids, "attention_mask": mask}).logits[0].float()
    logits[:, tiny_backend._suppress] = float("-inf")
    logprobs = torch.log_softmax(logits, -1)
    start = inputs["input_ids"].shape[1] - 1
    expected = [float(logprobs[start + i, t]) for i, t in enumerate(out.token_ids)]
    assert out.token_logprobs == pytest.approx(expected, abs=1e-4)
    assert [int(logprobs[start + i].argmax()) for i in range(12)] == out.token_ids
    assert out.token_offsets[0] == 0 and out.token_offsets[-1] == len(out.text)


def test_sampling_draws_n_samples_and_never_emits_vision_tokens(tiny_backend, evidence_video):
    params = SamplingParams(max_new_tokens=24, temperature=1.5, n=4, seed=7, logprobs=True)
    (gen,) = tiny_backend.generate([_coarse(evidence_video)], params)
    assert len(gen.outputs) == 4 and len({o.text for o in gen.outputs}) > 1
    for out in gen.outputs:
        assert not set(out.token_ids) & set(tiny_backend._suppress)
        assert all(lp <= 0 for lp in out.token_logprobs)
    (again,) = tiny_backend.generate([_coarse(evidence_video)], params)
    assert [o.text for o in again.outputs] == [o.text for o in gen.outputs]  # seeded per call


def test_choices_are_scored_at_the_first_position(tiny_backend, evidence_video):
    request = _fine(evidence_video, choices=("A", "B", "C", "D"))
    (gen,) = tiny_backend.generate([request], SamplingParams())
    out = gen.outputs[0]
    inputs, _ = tiny_backend.prepare([request])
    with torch.no_grad():
        last = tiny_backend.model(**inputs).logits[0, -1].float()
    last[tiny_backend._suppress] = float("-inf")
    logprobs = torch.log_softmax(last, -1)
    ids = tiny_backend.choice_token_ids("ABCD")
    assert out.choice_logprobs == pytest.approx({c: float(logprobs[i]) for c, i in zip("ABCD", ids)}, abs=1e-5)
    assert out.text == max("ABCD", key=out.choice_logprobs.get)
    assert answer_confidence(out) == pytest.approx(math.exp(out.choice_logprobs[out.text]))
    with pytest.raises(ValueError, match="tokens"):
        tiny_backend.choice_token_ids(["red"])


def test_batches_match_single_requests_and_report_what_was_decoded(tiny_backend, evidence_video):
    requests = [_coarse(evidence_video), _fine(evidence_video), _fine(evidence_video, choices=("A", "B"))]
    params = SamplingParams(max_new_tokens=8, logprobs=True)
    batched = tiny_backend.generate(requests, params)
    single = [tiny_backend.generate([r], params)[0] for r in requests]
    for b, s in zip(batched, single):
        assert b.text == s.text
        assert b.outputs[0].token_logprobs == pytest.approx(s.outputs[0].token_logprobs, abs=1e-4)
        assert b.video_tokens == s.video_tokens and b.prompt_tokens == s.prompt_tokens
    coarse, fine = batched[0], batched[1]
    assert [(c.start, c.end, c.frames) for c in fine.clips] == [(3.0, 5.0, 2), (8.0, 9.5, 2)]
    assert all(c.start <= c.first <= c.last <= c.end for c in fine.clips)
    assert coarse.frames == 12 and coarse.video_tokens <= SMALL.max_visual_tokens
    assert fine.video_tokens <= SMALL.max_visual_tokens
    assert fine.clips[0].height * fine.clips[0].width > coarse.clips[0].height * coarse.clips[0].width
    assert set(coarse.timing) == {"decode_s", "prepare_s", "generate_s"}


def test_processor_gets_each_clips_sampling_rate(tiny_backend, evidence_video):
    """second_per_grid_ts = temporal patch / sample fps: 2 s per grid at 1 fps, 1 s at 2 fps."""
    slow = _coarse(evidence_video, ZoomBudget(max_visual_tokens=64, min_frame_pixels=4 * 28 * 28, fps=1.0))
    fast = _coarse(evidence_video, ZoomBudget(max_visual_tokens=64, min_frame_pixels=4 * 28 * 28, fps=2.0))
    inputs, gens = tiny_backend.prepare([slow, fast])
    assert inputs["second_per_grid_ts"].tolist() == pytest.approx([2.0, 1.0])
    assert [g.frames for g in gens] == [12, 24]


def test_answer_confidence_reads_the_answer_letters_token():
    text = "<think>x</think><answer>B</answer><glue>[(1, 2)]</glue>"
    cut = [0, 16, 24, 25, 34, len(text)]  # the token text[24:25] is "B"
    out = Output(
        text=text, token_ids=[1, 2, 3, 4, 5], token_logprobs=[-1.0, -2.0, math.log(0.8), -3.0, -4.0], token_offsets=cut
    )
    assert text[24] == "B" and answer_confidence(out) == pytest.approx(0.8)
    bare = Output(text=" C", token_ids=[9], token_logprobs=[math.log(0.3)], token_offsets=[0, 2])
    assert answer_confidence(bare) == pytest.approx(0.3)
    assert (
        answer_confidence(Output(text="no letter here", token_ids=[1], token_logprobs=[0.0], token_offsets=[0, 14]))
        is None
    )
    assert answer_confidence(Output(text="<answer>B</answer>", token_ids=[1])) is None  # no log-probs asked


def test_vllm_is_imported_only_when_chosen():
    for module in ("zoomzero_plugin.eval.runner", "zoomzero_plugin.inference.modes", "zoomzero_plugin.data.filter"):
        importlib.import_module(module)
    assert "vllm" not in sys.modules
    with pytest.raises(ValueError, match="unknown backend"):
        load_backend("onnx", "x")
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(DependencyError, match="--backend vllm needs vLLM, which is not installed here") as info:
            load_backend("vllm", "x")
        assert "pip install ." in str(info.value) and "[vllm]" not in str(info.value)
