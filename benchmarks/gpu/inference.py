"""The inference sections: build a model of a real shape on the device, ``zoomzero eval``'s modes, the agent.

Everything goes through the package: ``inference.modes.predict`` (what ``zoomzero eval`` runs per batch), the
transformers backend, Eq. 3 planning, qwen-vl-utils decoding, the agent loop. A random-weight model writes no valid
template, so :class:`~zoomzero_plugin.inference.scripted.ScriptedBackend` chooses the words after the real backend
has decoded, encoded and generated its ``max_new_tokens`` (a random model never stops early): grounding passes name
the clue (``bench_inference.oracle``), the agent calls 4 times and answers.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import torch
from bench_inference import oracle
from measure import Device
from workload import Model, Workload

from zoomzero_plugin.agent import AgentBudget
from zoomzero_plugin.gvqa.zoom import ZoomBudget, paper_budget
from zoomzero_plugin.inference.agent import AgentConfig
from zoomzero_plugin.inference.hf_backend import TransformersBackend
from zoomzero_plugin.inference.modes import ModeConfig, predict
from zoomzero_plugin.inference.passes import Question
from zoomzero_plugin.inference.scripted import ScriptedBackend
from zoomzero_plugin.rows import row_truth
from zoomzero_plugin.synthetic.tiny_qwen import family_parts
from zoomzero_plugin.video_store import shared

EVAL_MODES = ("one-stage", "coarse-to-fine", "divide-and-conquer")
AGENT_CALLS = 4  # VideoZoomer's full call budget (AgentBudget.max_calls)
FRAMES_PER_CALL = 16  # AgentBudget.max_frames_per_call


def load(model: Model, w: Workload, dev: Device) -> tuple[TransformersBackend, dict[str, Any]]:
    """A random-weight model of ``model``'s shape built on the device (no download, nothing written), in the
    transformers backend; and what building it took."""
    shape = model.shape or {}
    processor, config, model_class = family_parts(model.family, for_vllm=True, **shape)
    torch.manual_seed(0)

    def build():
        with torch.device(w.device):
            return model_class._from_config(config, dtype=getattr(torch, w.dtype), attn_implementation="sdpa")

    seconds, built = dev.timed(build)
    built.generation_config.eos_token_id = processor.tokenizer.eos_token_id
    built.generation_config.pad_token_id = processor.tokenizer.pad_token_id
    backend = TransformersBackend(model.label, device=w.device, model_obj=built, processor=processor)
    params = sum(p.numel() for p in built.parameters())
    weights = sum(p.numel() * p.element_size() for p in built.parameters())
    info = {
        "family": model.family,
        "seconds": round(seconds, 2),
        "parameters": params,
        "peak_gib": dev.peak_gib(),
        "weights_gib": round(weights / 2**30, 2),
        "dtype": w.dtype,
        "attention": "sdpa",
        "tokens_per_frame_side_px": backend.geometry.factor,
    }
    return backend, info


def eval_budget(backend: Any, max_visual_tokens: int) -> ZoomBudget:
    """The paper's per-frame bounds on this model's geometry, at ``max_visual_tokens`` (L_v)."""
    return replace(paper_budget(None, backend.geometry), max_visual_tokens=max_visual_tokens)


def per_question(preds: list, budget: ZoomBudget) -> dict[str, float]:
    """Means per question of a mode's passes: what Eq. 3 planned and what the processor made of the frames."""
    n = len(preds)
    passes = [x for p in preds for x in p.record["passes"]]
    timings = [t for p in preds for t in p.timing["passes"]]
    planned_frames = [sum(c[2] for c in x["clips"]) for x in passes]
    planned_tokens = [f * budget.frame_tokens(x["frame_pixels"]) for f, x in zip(planned_frames, passes)]
    out = {
        "passes": len(passes) / n,
        "planned_frames": sum(planned_frames) / n,
        "planned_video_tokens": round(sum(planned_tokens) / n, 1),
        "frames": sum(x["frames"] for x in passes) / n,
        "video_tokens": sum(x["video_tokens"] for x in passes) / n,
    }
    for key in ("decode_s", "prepare_s", "generate_s"):
        out[key] = round(sum(t.get(key, 0.0) for t in timings) / n, 3)
    return out


def eval_section(backend: Any, rows: list[dict], w: Workload, dev: Device) -> dict[str, Any]:
    """One-stage, coarse-to-fine and divide-and-conquer over the same questions: seconds per question, the ratio to
    one-stage, peak memory and the work per question."""
    questions = [Question.from_row(r) for r in rows]
    scripted = ScriptedBackend(backend, oracle({r["videos"][0]: row_truth(r) for r in rows}))
    budget = eval_budget(backend, w.max_visual_tokens)
    cfg = ModeConfig(budget=budget, max_new_tokens=w.max_new_tokens, window_seconds=w.window_seconds)
    predict(scripted, questions[:1], "one-stage", cfg)  # warm-up: first kernels, lazy imports
    modes: dict[str, Any] = {}
    for mode in EVAL_MODES:
        shared().clear()  # every mode decodes its frames afresh
        seconds, preds = dev.timed(lambda m=mode: predict(scripted, questions, m, cfg))
        modes[mode] = {
            "seconds_per_question": round(seconds / len(questions), 3),
            "peak_gib": dev.peak_gib(),
            **per_question(preds, budget),
        }
    base = modes["one-stage"]["seconds_per_question"]
    for entry in modes.values():
        entry["x_one_stage"] = round(entry["seconds_per_question"] / base, 3)
    return {
        "questions": len(questions),
        "max_visual_tokens": budget.max_visual_tokens,
        "fps": budget.fps,
        "max_frames": budget.max_frames,
        "modes": modes,
    }


def filler(tokenizer: Any, tokens: int) -> str:
    """Words of thinking that the tokenizer reads as about ``tokens`` tokens."""
    if tokens <= 0:
        return ""
    sentence = "the square is in the middle of the video and the clue is there "
    ids = tokenizer.encode(sentence * (tokens // 4 + 1), add_special_tokens=False)[:tokens]
    return tokenizer.decode(ids) + " "


def call_script(truths: dict[str, Any], seconds: float, think: str = ""):
    """Turns 0..3: a ``<video_zoom>`` call of 16 frames on consecutive ``seconds``-long segments from just before the
    clue (whole seconds, so ``int(fps · (end − start))`` is exactly 16); turn 4: the answer."""
    fps = FRAMES_PER_CALL / seconds

    def script(request, _):
        qid, turn = request.tag.split("#")
        truth = truths[qid]
        if int(turn) >= AGENT_CALLS:
            return f"<think>{think}Seen.</think><answer>{truth.answer}</answer>"
        first = max(0.0, math.floor(truth.spans[0][0] - seconds))
        start = min(first + int(turn) * seconds, math.floor(truth.duration - seconds))
        return (
            f"<think>{think}The clue.</think>"
            f'<video_zoom>{{"segment": [{start:g}, {start + seconds:g}], "fps": {fps:g}}}</video_zoom>'
        )

    return script


def run_agent(backend: Any, rows: list[dict], w: Workload, think: str = "", turn_tokens: int | None = None):
    """The agent mode over ``rows`` with :func:`call_script`: (scripted backend holding every call, predictions)."""
    truths = {t.qid: t for t in map(row_truth, rows)}
    scripted = ScriptedBackend(backend, call_script(truths, w.call_seconds, think))
    budget = AgentBudget(max_new_tokens=turn_tokens or w.max_new_tokens)
    preds = predict(scripted, [Question.from_row(r) for r in rows], "agent", ModeConfig(agent=AgentConfig(budget)))
    return scripted, preds


def agent_section(backend: Any, rows: list[dict], w: Workload, dev: Device) -> dict[str, Any]:
    """VideoZoomer's loop (64-frame overview, 4 calls of 16 frames, then the answer): seconds per question, peak."""
    shared().clear()
    seconds, (scripted, preds) = dev.timed(lambda: run_agent(backend, rows, w))
    n = len(preds)
    prompts = [g.prompt_tokens for _, g in scripted.calls]
    return {
        "questions": n,
        "seconds_per_question": round(seconds / n, 3),
        "peak_gib": dev.peak_gib(),
        "frames": sum(p.record["frames"] for p in preds) / n,
        "calls": sum(p.record["calls"] for p in preds) / n,
        "errors": sum(p.record["errors"] for p in preds) / n,
        "turns": len(scripted.calls) / n,
        "answered": sum(p.record["answer"] is not None for p in preds) / n,
        "last_prompt_tokens": max(prompts),
        "decode_s": round(sum(p.timing["decode_s"] for p in preds) / n, 3),
        "turn_tokens": w.max_new_tokens,
    }
