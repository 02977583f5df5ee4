"""Teach a tiny random Qwen2.5-VL the response formats, not the answers: a cold start for RL runs on a CPU.

A random model never writes ``<answer>X</answer>`` or a ``<glue>`` list, so every response of a group gets the
same reward (0), every advantage is 0 and GRPO learns nothing. A few seconds of supervised steps on responses in
the right format — with the option letter and the spans drawn at random, never the true ones — give a policy
that writes the formats with chosen letters and spans spread evenly: rewards then differ within a group, and
what RL learns (the right letter, the right span) is left to RL. The same idea as VideoZoomer's cold-start SFT,
at toy scale.

Text only: the prompts are the rows' own prompts without their video (the vision tower is not trained here). Short
prompts keep it fast: the tiny tokenizer spells the paper's 100-word instruction in ~550 tokens, and a model taught
on cut prompts does not write the format after whole ones.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..agent.prompts import get_prompts, question_text
from ..ground_truth import LETTERS, GroundTruth
from ..gvqa.prompts import zoom_prompt


def _span(rng: random.Random, duration: float) -> tuple[float, float]:
    start = round(rng.uniform(0.0, duration * 0.8), 1)
    return start, round(min(duration, start + rng.uniform(1.0, duration / 3)), 1)


def grounded_response(rng: random.Random, truth: GroundTruth) -> str:
    """A Zoom-Zero template response with a random letter among the options and a random span."""
    s, e = _span(rng, truth.duration)
    letter = LETTERS[rng.randrange(len(truth.options))]
    return (f"<think>The square is at <time>({s}, {e})</time>.</think><answer>{letter}</answer>"
            f"<glue>[({s}, {e})]</glue>")


def agent_response(rng: random.Random, truth: GroundTruth) -> str:
    """A VideoZoomer turn: a ``<video_zoom>`` call on a random segment, or an answer with a random letter."""
    if rng.random() < 0.5:
        s, e = _span(rng, truth.duration)
        fps = rng.choice((1, 2))
        return f'<think>look</think><video_zoom>{{"segment": [{s}, {e}], "fps": {fps}}}</video_zoom>'
    return f"<think>seen</think><answer>{LETTERS[rng.randrange(len(truth.options))]}</answer>"


Messages = list[dict[str, str]]


def _user(text: str, system: str | None = None) -> Messages:
    head = [{"role": "system", "content": system}] if system else []
    return head + [{"role": "user", "content": text.replace("<video>", "")}]


def format_examples(rows: Sequence[Mapping[str, Any]], kind: str, n: int, zoom_style: str = "concise",
                    agent_prompt: str | None = None, seed: int = 0) -> list[tuple[Messages, str]]:
    """``n`` (chat messages, response) pairs over dataset ``rows`` (their own prompts, as the RL run shows them).

    ``kind``: ``grounded`` (the coarse pass's template; every fourth pair is the zoom pass's prompt in
    ``zoom_style`` with a one-letter answer) or ``agent`` (VideoZoomer turns, a call or an answer; after the system
    prompt of the agent's ``agent_prompt`` variant when given: ~800 tokens for the tiny tokenizer, 5x the time).
    """
    rng = random.Random(seed)
    system = get_prompts(agent_prompt).system if kind == "agent" and agent_prompt else None
    out = []
    for i in range(n):
        row = rows[i % len(rows)]
        truth = GroundTruth.parse(row["answer"])
        if kind == "agent":
            out.append((_user(row["prompt"], system), agent_response(rng, truth)))
        elif i % 4 == 3:
            out.append((_user(zoom_prompt(truth.question, truth.options, video=False, style=zoom_style)),
                        LETTERS[rng.randrange(len(truth.options))]))
        else:
            out.append((_user(row["prompt"]), grounded_response(rng, truth)))
    return out


def _encode(tokenizer, pairs: Iterable[tuple[Messages, str]]):
    """(token ids, loss labels with -100 on the prompt) per pair, the chat template's way."""
    rows = []
    for messages, response in pairs:
        head = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        head_ids = tokenizer.encode(head, add_special_tokens=False)
        tail_ids = tokenizer.encode(response + tokenizer.eos_token, add_special_tokens=False)
        rows.append((head_ids + tail_ids, [-100] * len(head_ids) + tail_ids))
    return rows


def teach_format(model_dir: str | Path, out_dir: str | Path, pairs: Sequence[tuple[Messages, str]], steps: int = 120,
                 batch_size: int = 16, lr: float = 3e-3, seed: int = 0) -> Path:
    """Train the model in ``model_dir`` on ``pairs`` (next-token loss on the responses) and save it, with its
    processor, to ``out_dir``. Returns ``out_dir``."""
    import torch

    torch.manual_seed(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-wide model: threads only wait on each other (10x slower on a busy machine)
    try:
        return _train(model_dir, out_dir, pairs, steps, batch_size, lr, seed)
    finally:
        torch.set_num_threads(threads)


def _train(model_dir, out_dir, pairs, steps: int, batch_size: int, lr: float, seed: int) -> Path:
    import torch
    from transformers import AutoProcessor, Qwen2_5_VLForConditionalGeneration

    processor = AutoProcessor.from_pretrained(model_dir)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(model_dir, torch_dtype=torch.float32)
    tokenizer = processor.tokenizer
    rows = _encode(tokenizer, pairs)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    rng = random.Random(seed)
    model.train()
    for _ in range(steps):
        chosen = [rows[rng.randrange(len(rows))] for _ in range(batch_size)]
        width = max(len(row_ids) for row_ids, _ in chosen)
        ids = torch.full((len(chosen), width), tokenizer.pad_token_id)
        labels = torch.full((len(chosen), width), -100)
        mask = torch.zeros((len(chosen), width), dtype=torch.long)
        for k, (row_ids, row_labels) in enumerate(chosen):
            ids[k, : len(row_ids)] = torch.tensor(row_ids)
            labels[k, : len(row_labels)] = torch.tensor(row_labels)
            mask[k, : len(row_ids)] = 1
        positions = torch.arange(width).expand(3, len(chosen), width)  # text only: skips get_rope_index's loops
        loss = model(input_ids=ids, attention_mask=mask, labels=labels, position_ids=positions).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    return out_dir


GROUNDED_ASK = "Answer, then cite the time spans."  # unlike the zoom pass's "Respond with only the letter…"


def short_prompts(rows: Iterable[Mapping[str, Any]], kind: str) -> list[dict[str, Any]]:
    """``rows`` with each prompt replaced by the ``<video>`` question and options, plus :data:`GROUNDED_ASK` for
    the ``grounded`` kind (``agent``: nothing more, the agent's own first turn): what a warm-started tiny model
    reads fastest; the format it writes comes from :func:`teach_format`."""
    ask = f"\n{GROUNDED_ASK}" if kind == "grounded" else ""
    out = []
    for row in rows:
        truth = GroundTruth.parse(row["answer"])
        out.append({**row, "prompt": question_text(truth.question, truth.options) + ask})
    return out
