"""The vLLM backend's side of the seam, against a stand-in ``vllm`` module driven by the real tiny model.

vLLM itself cannot run here (no GPU in CI). The stand-in mimics the documented offline API the backend
uses: ``LLM(model, …).generate(inputs, sampling_params)`` where an input is ``{"prompt",
"multi_modal_data": {"video": [(frames, metadata)]}, "mm_processor_kwargs"}`` (forwarded to the HF
processor, as vLLM does), and results carry ``prompt_token_ids`` and ``outputs[k].text/token_ids/logprobs``
(one ``{token_id: Logprob}`` per step: the top-``logprobs`` raw log-probs plus the sampled token's).
It checks the backend's request building and reading, not vLLM.
"""

import sys
import types

import pytest
import torch

from zoomzero_plugin.inference.backend import SamplingParams, load_backend

from .test_backend import _coarse, _fine


class _Logprob:
    def __init__(self, logprob):
        self.logprob = logprob


class _LLM:
    def __init__(self, model, dtype="auto", limit_mm_per_prompt=None, **kwargs):
        from zoomzero_plugin.inference.hf_backend import TransformersBackend

        self.hf = TransformersBackend(model, device="cpu")
        self.limit = limit_mm_per_prompt
        self.seen = []

    def generate(self, items, params, use_tqdm=False):
        return [self._one(item, sp) for item, sp in zip(items, params)]

    def _one(self, item, sp):
        videos = item.get("multi_modal_data", {}).get("video", [])
        images = item.get("multi_modal_data", {}).get("image", [])
        assert len(videos) <= self.limit["video"] and len(images) <= self.limit["image"]
        kwargs = dict(item.get("mm_processor_kwargs", {}))
        if videos:
            kwargs.update(videos=[f for f, _ in videos], video_metadata=[m for _, m in videos])
        if images:  # vLLM's HF processor resizes images by the processor's own rule
            kwargs.update(images=images)
        self.seen.append(item)
        inputs = self.hf.processor(text=[item["prompt"]], return_tensors="pt", **kwargs)
        ids, steps = inputs["input_ids"], []
        bias = torch.zeros(self.hf.model.config.get_text_config().vocab_size)
        for token, value in (sp.logit_bias or {}).items():
            bias[token] = value
        with torch.no_grad():
            for _ in range(sp.max_tokens):
                logits = self.hf.model(**{**inputs, "input_ids": ids, "attention_mask": torch.ones_like(ids)}).logits[0, -1]
                raw = torch.log_softmax(logits.float(), -1)
                allowed = logits.float() + bias
                if sp.allowed_token_ids:
                    mask = torch.full_like(allowed, float("-inf"))
                    mask[sp.allowed_token_ids] = 0
                    allowed = allowed + mask
                token = int(allowed.argmax())
                if sp.logprobs is not None:
                    top = raw.topk(sp.logprobs).indices.tolist() if sp.logprobs else []
                    steps.append({t: _Logprob(float(raw[t])) for t in top + [token]})
                ids = torch.cat([ids, torch.tensor([[token]])], 1)
                if token == self.hf.tokenizer.eos_token_id:
                    break
                text = self.hf.tokenizer.decode(ids[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
                if any(s in text for s in sp.stop or ()):  # vLLM matches stop strings in the generated text only
                    break
        out = ids[0, inputs["input_ids"].shape[1]:].tolist()
        text = self.hf.tokenizer.decode(out, skip_special_tokens=True)
        ends = [text.find(s) + len(s) for s in sp.stop or () if s in text]
        if ends:  # include_stop_str_in_output: the text ends with the stop string
            assert sp.include_stop_str_in_output
            text = text[: min(ends)]
        completion = types.SimpleNamespace(text=text, token_ids=out, logprobs=steps or None)
        return types.SimpleNamespace(prompt_token_ids=inputs["input_ids"][0].tolist(), outputs=[completion])


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM = _LLM
    module.SamplingParams = lambda **kw: types.SimpleNamespace(**{"logit_bias": None, "allowed_token_ids": None,
                                                                  "stop": None, **kw})
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def test_vllm_backend_reads_what_the_engine_returns(fake_vllm, tiny_backend, tiny_model_dir, evidence_video):
    backend = load_backend("vllm", str(tiny_model_dir))
    assert backend.factor == tiny_backend.factor and not backend.absolute_time
    requests = [_coarse(evidence_video), _fine(evidence_video), _fine(evidence_video, choices=("A", "B", "C"))]
    params = SamplingParams(max_new_tokens=6, logprobs=True)
    got, want = backend.generate(requests, params), tiny_backend.generate(requests, params)
    for g, w in zip(got, want):
        assert g.text == w.text
        assert g.video_tokens == w.video_tokens and g.prompt_tokens == w.prompt_tokens
        assert [(c.start, c.end, c.frames) for c in g.clips] == [(c.start, c.end, c.frames) for c in w.clips]
        # raw full-vocabulary log-probs (vLLM) vs renormalised without the suppressed vision tokens (HF):
        # the same up to the log of the vision tokens' mass, about 0.01 for the random model
        assert g.outputs[0].token_logprobs == pytest.approx(w.outputs[0].token_logprobs, abs=0.02)
        assert g.outputs[0].token_logprobs != pytest.approx(w.outputs[0].token_logprobs, abs=1e-5)
        assert g.outputs[0].token_offsets == w.outputs[0].token_offsets
    # letters: the chosen one's log-prob is read; others only when among vLLM's top 20 (else -inf)
    chosen, scores = got[2].text, got[2].outputs[0].choice_logprobs
    assert set(scores) == {"A", "B", "C"} and chosen == want[2].text
    assert scores[chosen] == pytest.approx(want[2].outputs[0].choice_logprobs[chosen], abs=0.02)
    for letter, value in scores.items():
        assert value == float("-inf") or value == pytest.approx(want[2].outputs[0].choice_logprobs[letter], abs=0.02)


def test_vllm_backend_runs_the_agent_as_the_transformers_backend(fake_vllm, tiny_backend, tiny_model_dir, bench_rows):
    from zoomzero_plugin.inference.modes import predict
    from zoomzero_plugin.inference.passes import Question
    from zoomzero_plugin.rows import read_rows

    from .test_agent import CFG, scripted

    rows = read_rows(bench_rows)[:3]
    backend = load_backend("vllm", str(tiny_model_dir), max_images=128)
    assert backend.llm.limit == {"video": 16, "image": 128}
    questions = [Question.from_row(r) for r in rows]
    got = predict(scripted(backend, rows), questions, "agent", CFG)
    want = predict(scripted(tiny_backend, rows), questions, "agent", CFG)
    assert [p.record for p in got] == [p.record for p in want]
    item = backend.llm.seen[3]  # round 1 of the question that called once: overview + 4 clip frames
    assert item["prompt"].count("<|vision_start|><|image_pad|><|vision_end|>") == len(item["multi_modal_data"]["image"]) == 10
    assert "mm_processor_kwargs" not in item


def test_vllm_backend_stops_where_the_engine_stops(fake_vllm, tiny_backend, tiny_model_dir):
    from zoomzero_plugin.inference.backend import Request

    backend = load_backend("vllm", str(tiny_model_dir))
    request = Request("What is this? Answer in words.")
    free = backend.generate([request], SamplingParams(max_new_tokens=8))[0].text
    stop = free[2:4]
    cut = backend.generate([request], SamplingParams(max_new_tokens=8, stop=(stop,)))[0].text
    assert cut == free[: free.find(stop) + len(stop)]
