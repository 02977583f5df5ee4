"""The supervised steps of a warm start (:mod:`.warm_start`): its examples encoded as the processor encodes them,
batched with the prompt masked out of the labels, and trained with next-token loss (the shared system prompt run once
as a cache); and responses generated to an encoded prompt (:func:`generate_responses`, what the probes of a warm
start read). An example is :class:`.warm_start.Example`: a prompt and its response, with the prompt's media.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..mrope import model_positions
from ..vision import VisionGeometry

MEDIA_KEYS = ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw", "second_per_grid_ts")


def _video_kwargs(example: Any, timestamps: bool) -> dict[str, Any]:
    """The processor's video arguments: the frames and, where it writes timestamps (Qwen3-VL), their metadata without a
    second sampling, as the rollout gives them (Qwen2.5-VL's time is ``second_per_grid_ts``, added after)."""
    timing = {"video_metadata": list(example.video_metadata), "do_sample_frames": False} if timestamps else {}
    return {"videos": list(example.videos), **timing} if example.videos else {"videos": None}


def prompt_inputs(processor, example: Any) -> dict[str, Any]:
    """The model inputs of ``example``'s prompt and media as the processor encodes them (tensors, batch of one) —
    what the rollout feeds the model: Qwen3-VL's video timestamps from the metadata, Qwen2.5-VL's
    ``second_per_grid_ts`` as EasyR1's dataset sets it (seconds per temporal patch of 2 frames)."""
    if not (example.images or example.videos):
        ids = processor.tokenizer.encode(example.prompt, add_special_tokens=False)
        return {"input_ids": [ids]}
    timestamps = VisionGeometry.of(processor).timestamps
    inputs = dict(
        processor(
            text=[example.prompt],
            images=list(example.images) or None,
            return_tensors="pt",
            **_video_kwargs(example, timestamps),
        )
    )
    if example.videos and not timestamps:
        inputs["second_per_grid_ts"] = [2.0 / fps for fps in example.video_fps]
    return inputs


def generate_responses(
    model, processor, inputs: dict[str, Any], samples: int, greedy: bool, seed: int, max_new_tokens: int
) -> list[tuple[str, bool]]:
    """``samples`` responses (one when ``greedy``; else at temperature 1, no top-k or top-p, as RL samples) to the
    encoded prompt ``inputs`` (:func:`prompt_inputs`), each ``(text, ended)``: ``ended`` when the end-of-turn token
    came within ``max_new_tokens``. What the warm starts' probes read."""
    import torch

    eos = processor.tokenizer.eos_token_id
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(
            **inputs,
            max_new_tokens=max_new_tokens,
            do_sample=not greedy,
            temperature=None if greedy else 1.0,
            top_p=None,
            top_k=None,
            num_return_sequences=1 if greedy else samples,
            eos_token_id=eos,
            pad_token_id=processor.tokenizer.pad_token_id,
        )
    new = out[:, inputs["input_ids"].shape[1] :]
    texts = processor.tokenizer.batch_decode(new, skip_special_tokens=True)
    return [(text, bool((ids == eos).any())) for text, ids in zip(texts, new)]


def _encode(processor, examples: Sequence[Any]) -> list[dict[str, Any]]:
    """Per example: ``input_ids`` and ``labels`` (-100 on the prompt) as lists, and the images' ``pixel_values`` and
    ``image_grid_thw`` (the processor's, each distinct prompt processed once: :func:`prompt_inputs`); each response
    ends with the end-of-turn token."""
    tokenizer = processor.tokenizer
    prompts: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
    out = []
    for example in examples:
        key = (example.prompt, tuple(map(id, example.images)), tuple(map(id, example.videos)))
        if key not in prompts:
            prompts[key] = prompt_inputs(processor, example)
        head = prompts[key]
        head_ids = list(map(int, head["input_ids"][0]))
        tail_ids = tokenizer.encode(example.response + tokenizer.eos_token, add_special_tokens=False)
        out.append(
            {
                "input_ids": head_ids + tail_ids,
                "labels": [-100] * len(head_ids) + tail_ids,
                **{k: head[k] for k in MEDIA_KEYS if k in head},
            }
        )
    return out


def shared_prefix(encoded: Sequence[dict[str, Any]], media_token_ids: Sequence[int]) -> int:
    """Tokens at the start of every encoded example that are the same in all, stop before the first image or video
    token and hold no label: the agent's system prompt, ~800 of the tiny tokenizer's ~1,100 tokens of a first
    prompt."""
    first = encoded[0]["input_ids"]
    n = min(next(i for i, x in enumerate(e["labels"]) if x != -100) for e in encoded)
    n = min([n] + [first.index(t) for t in media_token_ids if t in first[:n]])
    for e in encoded[1:]:
        ids = e["input_ids"]
        n = next((k for k in range(n) if ids[k] != first[k]), n)
    return n


def _batch(chosen: Sequence[dict[str, Any]], pad_id: int, skip: int = 0) -> dict[str, Any]:
    """Model inputs for encoded examples without their first ``skip`` tokens: ids, labels and attention mask
    right-padded (the mask covers the ``skip`` tokens too, as a cache of them); the images' pixels and grids in
    order."""
    import torch

    width = max(len(e["input_ids"]) for e in chosen) - skip
    ids = torch.full((len(chosen), width), pad_id)
    labels = torch.full((len(chosen), width), -100)
    mask = torch.zeros((len(chosen), skip + width), dtype=torch.long)
    for k, e in enumerate(chosen):
        n = len(e["input_ids"]) - skip
        ids[k, :n] = torch.tensor(e["input_ids"][skip:])
        labels[k, :n] = torch.tensor(e["labels"][skip:])
        mask[k, : skip + n] = 1
    batch = {"input_ids": ids, "labels": labels, "attention_mask": mask}
    for key in MEDIA_KEYS:
        parts = [e[key] for e in chosen if key in e]
        if parts:
            seconds = key == "second_per_grid_ts"
            batch[key] = torch.tensor([x for p in parts for x in p]) if seconds else torch.cat(parts)
    return batch


def _loss(model, batch: dict[str, Any], prefix: Sequence[int]):
    """Next-token loss of ``batch``: each example's mean over its response tokens, then the mean over examples (a
    one-letter answer weighs as much as a 50-token template).

    The tokens ``prefix`` that all examples share are run once without gradient and given to the batch as its
    key/value cache (the batch's positions continue theirs): the attention over a ~1,300-token agent prompt costs
    ~2x less so; the shared system prompt's own tokens are not trained, what follows it is."""
    import torch

    rows, width = batch["input_ids"].shape
    full = torch.cat([torch.tensor([list(prefix)] * rows, dtype=torch.long), batch["input_ids"]], dim=1)
    if "image_grid_thw" in batch or "video_grid_thw" in batch:
        positions = model_positions(model, full, batch)
    else:
        positions = (batch["attention_mask"].cumsum(-1) - 1).clamp(min=0).expand(3, rows, -1)
    cache = None
    if prefix:
        with torch.no_grad():
            cache = model(
                input_ids=full[:1, : len(prefix)], position_ids=positions[:, :1, : len(prefix)], use_cache=True
            ).past_key_values
        cache.batch_repeat_interleave(rows)
    labels = batch.pop("labels")
    logits = model(**batch, position_ids=positions[:, :, len(prefix) :], past_key_values=cache).logits
    targets = labels[:, 1:]
    token_loss = torch.nn.functional.cross_entropy(
        logits[:, :-1].transpose(1, 2), targets, ignore_index=-100, reduction="none"
    )
    counted = (targets != -100).sum(-1).clamp(min=1)
    return (token_loss.sum(-1) / counted).mean()


SCHEDULES = ("constant", "cosine")


def train_steps(
    model_dir,
    processor,
    examples: Sequence[Any],
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    schedule: str = "constant",
):
    """The model of ``model_dir`` after ``steps`` AdamW steps of next-token loss on the responses of ``examples``, at
    ``lr`` throughout (``constant``) or as LLaMA-Factory's SFT default (``cosine``: warm-up over the first 5% of the
    steps, cosine decay to 0, gradients clipped to norm 1)."""
    import torch
    from transformers import AutoModelForImageTextToText, get_cosine_schedule_with_warmup

    model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32)  # Qwen2.5-VL, Qwen3-VL
    encoded = _encode(processor, examples)
    tokens = processor.tokenizer.convert_tokens_to_ids([processor.image_token, processor.video_token])
    skip = shared_prefix(encoded, tokens)
    prefix = encoded[0]["input_ids"][:skip]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    cosine = schedule == "cosine"
    scheduler = get_cosine_schedule_with_warmup(optimizer, max(1, steps // 20), steps) if cosine else None
    rng = random.Random(seed)
    model.train()
    for _ in range(steps):
        chosen = [encoded[rng.randrange(len(encoded))] for _ in range(batch_size)]
        loss = _loss(model, _batch(chosen, processor.tokenizer.pad_token_id, skip), prefix)
        optimizer.zero_grad()
        loss.backward()
        if cosine:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    return model.eval()
