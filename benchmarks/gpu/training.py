"""The training section: one actor forward + backward over the longest sequence each method trains on.

- Zoom-Zero: the coarse pass of a synthetic video at the paper's long-video budget (Eq. 3 plan, qwen-vl-utils
  frames, the model's processor: what the rollout's prompt holds) followed by a response of the recipes' 512 tokens.
- VideoZoomer: a whole trajectory at its budget, made by the package's agent loop (a 64-frame overview, 4 calls of
  16 frames, every turn's thinking about ``AgentBudget.max_new_tokens`` long, then the answer): the last turn's
  prompt (the chat template over all 128 images and every turn) with the answer appended.

The step is EasyR1's actor step in miniature, on one device: bf16 weights, SDPA, the vision tower trained too (the
recipes' ``freeze_vision_tower: false``), gradient checkpointing on or off; the log-probabilities of the response
tokens (every token after the first prompt) from the model's hidden states, the vocabulary projection taken in
chunks of 2,048 tokens under checkpointing so that the whole (tokens × vocabulary) logits never exist at once, and
the policy-gradient loss ``−mean(A · log p)`` with A = 1. The peak counts the bf16 weights and gradients and the
activations; not the optimizer (FSDP keeps fp32 weights and Adam's moments sharded over the GPUs: 12 bytes per
parameter divided by their number).
"""

from __future__ import annotations

from typing import Any

import torch
from inference import eval_budget, filler, run_agent
from measure import Device
from torch.utils.checkpoint import checkpoint
from workload import Workload

from zoomzero_plugin.gvqa.zoom import plan_coarse
from zoomzero_plugin.inference.backend import Request
from zoomzero_plugin.inference.passes import Question
from zoomzero_plugin.inference.scripted import template

CHUNK = 2048


def response_logprobs(hidden: torch.Tensor, head: torch.nn.Module, labels: torch.Tensor) -> torch.Tensor:
    """(R,) log p of ``labels`` (R,) from the hidden states (R, H) that predict them, in chunks under checkpointing."""

    def piece(h: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -torch.nn.functional.cross_entropy(head(h).float(), y, reduction="none")

    parts = [
        checkpoint(piece, hidden[i : i + CHUNK], labels[i : i + CHUNK], use_reentrant=False)
        for i in range(0, labels.shape[0], CHUNK)
    ]
    return torch.cat(parts)


def actor_step(model: Any, inputs: dict[str, Any], response: int) -> None:
    """Forward over the whole sequence, the loss over its last ``response`` tokens, backward."""
    ids = inputs["input_ids"][0]
    hidden = model.model(**inputs, use_cache=False).last_hidden_state[0]
    logp = response_logprobs(hidden[-response - 1 : -1], model.lm_head, ids[-response:])
    (-logp.mean()).backward()


def zoomzero_sequence(backend: Any, row: dict, w: Workload) -> tuple[dict[str, Any], dict[str, int]]:
    """The coarse pass's prompt at ``train_visual_tokens`` plus ``train_response_tokens`` response tokens."""
    q = Question.from_row(row)
    plan = plan_coarse(q.duration, eval_budget(backend, w.train_visual_tokens))
    inputs, (gen,) = backend.prepare([Request(q.coarse_prompt(), tuple(plan.video_elements(q.video)))])
    tokenizer = backend.tokenizer
    text = template(q.truth.answer, q.truth.spans, think=filler(tokenizer, w.train_response_tokens))
    response = tokenizer.encode(text, add_special_tokens=False)[: w.train_response_tokens]
    ids = torch.tensor([response], device=inputs["input_ids"].device)
    inputs["input_ids"] = torch.cat([inputs["input_ids"], ids], dim=1)
    inputs["attention_mask"] = torch.cat([inputs["attention_mask"], torch.ones_like(ids)], dim=1)
    sizes = {
        "tokens": int(inputs["input_ids"].shape[1]),
        "visual_tokens": gen.video_tokens,
        "planned_visual_tokens": round(plan.tokens),
        "frames": gen.frames,
        "response_tokens": len(response),
    }
    return dict(inputs), sizes


def videozoomer_sequence(backend: Any, row: dict, w: Workload) -> tuple[dict[str, Any], dict[str, int]]:
    """A whole trajectory (the agent loop with long thinking), as one sequence: the last prompt plus the answer."""
    think = filler(backend.tokenizer, w.trajectory_think_tokens)
    scripted, (pred,) = run_agent(backend, [row], w, think=think, turn_tokens=1)
    first, (last_request, last) = scripted.calls[0][1], scripted.calls[-1]
    answer = last.outputs[0].text + backend.tokenizer.eos_token
    whole = Request(last_request.prompt + answer, images=last_request.images, formatted=True)
    inputs, (gen,) = backend.prepare([whole])
    sizes = {
        "tokens": int(inputs["input_ids"].shape[1]),
        "visual_tokens": gen.image_tokens,
        "frames": pred.record["frames"],
        "calls": pred.record["calls"],
        "turns": len(scripted.calls),
        "prompt_tokens": first.prompt_tokens,
        "response_tokens": int(inputs["input_ids"].shape[1]) - first.prompt_tokens,
    }
    return dict(inputs), sizes


def measure_sequence(model: Any, inputs: dict[str, Any], response: int, w: Workload, dev: Device) -> dict[str, Any]:
    """The step with gradient checkpointing on, then off: the fastest of ``train_repeat`` runs, the highest peak."""
    out = {}
    for label, on in (("checkpointing", True), ("no_checkpointing", False)):
        if on:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_disable()
        runs = []
        for _ in range(w.train_repeat):
            model.zero_grad(set_to_none=True)
            runs.append(dev.attempt(lambda: actor_step(model, inputs, response)))
            if runs[-1]["status"] != "ok":
                break
        model.zero_grad(set_to_none=True)
        done = [r["seconds"] for r in runs if r["status"] == "ok"]
        out[label] = {
            "status": runs[-1]["status"],
            "seconds": round(min(done), 3) if done else None,
            "peak_gib": max((r["peak_gib"] for r in runs if r["peak_gib"] is not None), default=None),
            "reserved_gib": max((r["reserved_gib"] for r in runs if r["reserved_gib"] is not None), default=None),
            "runs": len(runs),
        }
    dev.free()
    return out


def train_section(backend: Any, rows: list[dict], w: Workload, dev: Device) -> dict[str, Any]:
    model = backend.model
    result: dict[str, Any] = {}
    grads = sum(p.numel() * p.element_size() for p in model.parameters())
    for name, build in (("zoomzero", zoomzero_sequence), ("videozoomer", videozoomer_sequence)):
        model.eval()
        inputs, sizes = build(backend, rows[0], w)
        model.train()
        measured = measure_sequence(model, inputs, sizes["response_tokens"], w, dev)
        logits_gib = sizes["response_tokens"] * model.lm_head.out_features * 2 / 2**30
        result[name] = {**sizes, **measured, "bf16_response_logits_gib": round(logits_gib, 2)}
        del inputs
        dev.free()
    model.eval()
    model.gradient_checkpointing_disable()
    result["gradients_gib"] = round(grads / 2**30, 2)
    return result
