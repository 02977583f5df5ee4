"""EasyR1 host speed: tokenadv vs EasyR1's own grpo in the same run, and the zoom hook's driver-side work.

    python benchmarks/bench_easyr1.py [--responses 512] [--tokens 512] [--group 8] [--repeats 20]

Both estimators go through EasyR1's (patched) ``ray_trainer.compute_advantage`` on the same ``DataProto``.
The zoom bookkeeping is everything the hook does in the trainer process per step except the zoom
generation itself: decode every response and parse its glue spans, plan Eq. 3, build the zoom batch (cold
prompt cache: every step brings new questions), read and score the zoom answers, statistics. Scoring all
reward components happens in EasyR1's reward actor (as without the plugin); its time is shown apart.
Goals: tokenadv ≤ 1.0x grpo; bookkeeping ≤ 50 ms median for 512 responses. Uses the tiny offline
tokenizer/processor: its small vocabulary makes ~2x more tokens per response than Qwen's tokenizer.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from _timing import median_ms, print_table  # noqa: E402

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable  # noqa: E402
from zoomzero_plugin.ground_truth import GroundTruth  # noqa: E402

SHIMS = Path(__file__).resolve().parents[1] / "tests" / "easyr1" / "shims"


def import_easyr1_trainer():
    """EasyR1's trainer module, with the plugins active. Without vLLM (CPU), the tests' import shim stands in."""
    if importlib.util.find_spec("vllm") is None:
        sys.path.insert(0, str(SHIMS))
        print(f"note: vLLM not installed; importing EasyR1's trainer with the test import shim ({SHIMS})")
    ensure_torchvision_importable()
    from zoomzero_plugin.hosts.easyr1 import activate

    activate("benchmark")
    from verl.trainer import ray_trainer

    return ray_trainer


def response_text(rng: random.Random, truth: GroundTruth) -> str:
    pairs = sorted((round(s, 1), round(min(s + rng.uniform(1, 20), truth.duration), 1))
                   for s in (rng.uniform(0, truth.duration - 1) for _ in range(rng.randint(0, 3))))
    think = " ".join(f"At <time>({s}, {e})</time> the person lifts the cup while the camera pans left." for s, e in pairs)
    glue = f"<glue>[{', '.join(f'({s}, {e})' for s, e in pairs)}]</glue>" if pairs or rng.random() < 0.5 else ""
    return f"<think>{think or 'Nothing is clear.'}</think><answer>{rng.choice('ABCD')}</answer>{glue}"


def make_batch(tokenizer, n: int, length: int, group: int, seed: int = 0):
    """A training batch after generation: n responses (padded to ``length``), ``group`` per prompt."""
    from verl.protocol import DataProto

    rng = random.Random(seed)
    truths = [
        GroundTruth(answer=rng.choice("ABCD"), options=("red", "green", "blue", "yellow"), spans=((10.0, 25.0),),
                    duration=rng.uniform(60, 600), qid=f"q{i}", question=f"What happens at moment {i}?")
        for i in range(n // group)
    ]
    texts = [response_text(rng, truths[i // group]) for i in range(n)]
    ids = [tokenizer.encode(t, add_special_tokens=False)[: length - 1] + [tokenizer.eos_token_id] for t in texts]
    responses = torch.full((n, length), tokenizer.pad_token_id)
    mask = torch.zeros((n, length), dtype=torch.long)
    for i, x in enumerate(ids):
        responses[i, : len(x)], mask[i, : len(x)] = torch.tensor(x), 1
    video_pad = tokenizer.convert_tokens_to_ids("<|video_pad|>")
    prompts = torch.full((n, 64), tokenizer.pad_token_id)
    prompts[:, :40] = video_pad
    non_tensors = {
        "uid": np.array([f"uid-{i // group}" for i in range(n)], dtype=object),
        "ground_truth": np.array([truths[i // group].to_json() for i in range(n)], dtype=object),
        "multi_modal_data": np.array([{"videos": [f"/data/videos/{i // group}.mp4"]} for i in range(n)], dtype=object),
    }
    return DataProto.from_dict(tensors={"responses": responses, "response_mask": mask, "prompts": prompts}, non_tensors=non_tensors)


def advantage_rows(ray_trainer, tokenizer, n, length, group, repeats):
    from zoomzero_plugin.hosts.easyr1.batch_step import COMPONENT_PREFIX
    from zoomzero_plugin.hosts.easyr1.zoomzero.tokenadv import GLUE_MASK, NAME, _masker

    data = make_batch(tokenizer, n, length, group)
    rng = np.random.default_rng(0)
    for name in ("format", "accuracy", "zoom"):
        data.batch[COMPONENT_PREFIX + name] = torch.tensor(rng.integers(0, 2, n), dtype=torch.float32)
    data.batch[COMPONENT_PREFIX + "iou"] = torch.tensor(rng.random(n), dtype=torch.float32)
    lengths = data.batch["response_mask"].sum(-1)
    scores = torch.zeros(n, length)
    scores[torch.arange(n), lengths - 1] = torch.tensor(rng.random(n), dtype=torch.float32)
    data.batch["token_level_rewards"] = scores
    masker = _masker(tokenizer)
    data.batch[GLUE_MASK] = masker(data.batch["responses"], data.batch["response_mask"])
    data.meta_info[NAME] = {"eps": 1e-6}

    grpo = median_ms(lambda: ray_trainer.compute_advantage(data, adv_estimator="grpo"), repeats)
    tokenadv = median_ms(lambda: ray_trainer.compute_advantage(data, adv_estimator="tokenadv"), repeats)
    fresh = median_ms(lambda: type(masker)(tokenizer)(data.batch["responses"], data.batch["response_mask"]), max(3, repeats // 4), 1)
    warm = median_ms(lambda: masker(data.batch["responses"], data.batch["response_mask"]), repeats)
    return [
        (f"EasyR1 grpo, compute_advantage ({n}x{length})", f"{grpo:8.2f} ms"),
        (f"tokenadv, compute_advantage ({n}x{length})", f"{tokenadv:8.2f} ms"),
        ("tokenadv / grpo (goal <= 1.0x)", f"{tokenadv / grpo:8.2f} x"),
        ("tokenadv prepare: glue masks, warm token cache", f"{warm:8.2f} ms"),
        ("tokenadv prepare: glue masks, first step", f"{fresh:8.2f} ms"),
    ]


def zoom_rows(tokenizer, processor, n, length, group, repeats):
    from verl.protocol import DataProto

    from zoomzero_plugin.gvqa_reward import compute_score
    from zoomzero_plugin.hosts.easyr1.zoomzero.options import ZoomOptions
    from zoomzero_plugin.hosts.easyr1.zoomzero.zoom_hook import ZoomHook

    batches = [make_batch(tokenizer, n, length, group, seed=s) for s in range(repeats + 3)]
    options = ZoomOptions(enable=True)
    kwargs = {"components": ["format", "iou", "accuracy", "zoom"], "zoom": {"enable": True}}
    answer = tokenizer.encode("B", add_special_tokens=False) + [tokenizer.eos_token_id]
    phases = {"decode + parse glue + plan": [], "build zoom batch": [], "read answers + stats": []}
    scoring = []
    import time

    def step(batch):
        hook = ZoomHook(options, tokenizer, processor, coarse_fps=1.0)  # cold prompt cache: new questions
        t0 = time.perf_counter()
        texts = hook.decode(batch.batch["responses"], batch.batch["response_mask"])
        requests = hook.plan(texts, batch.non_tensor_batch["ground_truth"], batch.non_tensor_batch["multi_modal_data"])
        t1 = time.perf_counter()
        zoom = hook.zoom_batch(requests)
        t2 = time.perf_counter()
        k = len(zoom)
        output = DataProto.from_dict(tensors={
            "responses": torch.tensor([answer] * k), "response_mask": torch.ones(k, len(answer), dtype=torch.long)})
        answers = hook.answers(requests, output, len(batch))
        hook.stats(requests, answers, batch.batch["prompts"])
        t3 = time.perf_counter()
        inputs = [{"response": t, "response_length": 0, "ground_truth": g, "zoom_answer": a}
                  for t, g, a in zip(texts, batch.non_tensor_batch["ground_truth"], answers)]
        compute_score(inputs, **kwargs)  # runs in EasyR1's reward actor, which EasyR1 runs with or without zoom
        scoring.append((time.perf_counter() - t3) * 1e3)
        return [(t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3], k

    totals, zoomed = [], 0
    for i, batch in enumerate(batches):
        times, zoomed = step(batch)
        if i >= 3:  # warm-up
            for name, value in zip(phases, times):
                phases[name].append(value)
            totals.append(sum(times))
    rows = [(f"zoom bookkeeping: {name}", f"{np.median(v):8.2f} ms") for name, v in phases.items()]
    rows.append((f"zoom bookkeeping per step, {n} responses ({zoomed} zoomed; goal <= 50 ms)", f"{np.median(totals):8.2f} ms"))
    rows.append(("gvqa scoring of the same responses (reward actor)", f"{np.median(scoring[3:]):8.2f} ms"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--responses", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--group", type=int, default=8, help="responses per prompt (rollout.n)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ray_trainer = import_easyr1_trainer()
    from zoomzero_plugin.synthetic.tiny_qwen import build_processor

    processor = build_processor()
    tokenizer = processor.tokenizer
    rows = advantage_rows(ray_trainer, tokenizer, args.responses, args.tokens, args.group, args.repeats)
    rows += zoom_rows(tokenizer, processor, args.responses, args.tokens, args.group, args.repeats)
    import verl

    print_table(f"EasyR1 host (EasyR1 {verl.__version__}, torch threads 1, median of {args.repeats})", rows)


if __name__ == "__main__":
    main()
