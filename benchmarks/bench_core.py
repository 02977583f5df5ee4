"""Core speed: TokenAdv vs GRPO-on-summed-reward, the response parser + rewards, glue token masks, and
the parser on adversarial ~1 MB responses (goal: <= 50 ms each; they must never grow faster than linearly).

    python benchmarks/bench_core.py [--responses 512] [--tokens 512] [--repeats 30] [--adversarial-only]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _timing import fastest, median_ms, print_table  # noqa: E402

from zoomzero_plugin import GlueTokenMasker, GroundTruth, RewardConfig, grpo_advantage, score_response, token_adv  # noqa: E402
from zoomzero_plugin.gvqa.parsing import glue_char_ranges, parse_response  # noqa: E402
from zoomzero_plugin.synthetic.adversarial import CASES, MB, adversarial_responses  # noqa: E402

GOAL_MS = 50.0


def realistic_response(rng: random.Random, duration: float) -> str:
    spans = sorted(round(rng.uniform(0, duration), 1) for _ in range(2 * rng.randint(1, 3)))
    pairs = [(spans[i], spans[i + 1]) for i in range(0, len(spans), 2)]
    think = " ".join(
        f"At <time>({s}, {e})</time> the person {rng.choice(['opens', 'lifts', 'drops', 'turns'])} the "
        f"{rng.choice(['door', 'cup', 'box', 'lid'])} while the camera pans slowly to the left."
        for s, e in pairs
    )
    glue = ", ".join(f"({s}, {e})" for s, e in pairs)
    text = f"<think>{think}</think>\n<answer>{rng.choice('ABCD')}</answer>\n<glue>[{glue}]</glue>"
    if rng.random() < 0.1:
        text = text[: rng.randrange(len(text))]  # truncated responses happen
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--responses", type=int, default=512)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--adversarial-only", action="store_true", help="only the adversarial parse table")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if not args.adversarial_only:
        core_table(args)
    adversarial_table(max(3, args.repeats // 6))


def adversarial_table(repeats: int) -> None:
    """parse_response and glue_char_ranges on each adversarial response (median of ``repeats``).

    The growth column is the fastest of 5 runs at 16 MB divided by the fastest at 4 MB: about 4 when linear, 16 when
    quadratic (at 1 MB and below the text sits in CPU caches, which makes ratios from there look worse).
    """
    rows = []
    for name, text in adversarial_responses().items():
        t_parse = median_ms(lambda: parse_response(text, 12.0), repeats, warmup=1)
        t_ranges = median_ms(lambda: glue_char_ranges(text), repeats, warmup=1)
        big = {size: CASES[name](size) for size in (4 * MB, 16 * MB)}
        best = fastest({size: (lambda t=text: parse_response(t, 12.0)) for size, text in big.items()}, 5)
        growth = best[16 * MB][0] / best[4 * MB][0] if best[4 * MB][0] > 0 else float("nan")
        verdict = "ok" if t_parse <= GOAL_MS else "over goal"
        rows.append(
            (
                f"{name} ({len(text) / 2**20:.2f} MB)",
                f"parse {t_parse:7.1f} ms  glue ranges {t_ranges:6.1f} ms  x{growth:4.1f} 4->16 MB  {verdict}",
            )
        )
    print_table(f"parser on adversarial responses, CPU, 1 thread (median of {repeats}; goal <= {GOAL_MS:.0f} ms)", rows)


def core_table(args: argparse.Namespace) -> None:
    bs, length, group = args.responses, args.tokens, 8
    g = torch.Generator().manual_seed(0)
    comps = {k: torch.randint(0, 2, (bs,), generator=g).float() for k in ("format", "accuracy", "zoom")}
    comps["iou"] = torch.rand(bs, generator=g)
    glue = torch.rand(bs, length, generator=g) < 0.1
    mask = torch.ones(bs, length)
    index = [f"uid-{i // group}" for i in range(bs)]
    overall = sum(comps.values()) / 4

    rng = random.Random(0)
    truth = GroundTruth("B", ("a", "b", "c", "d"), ((10.0, 20.0), (35.0, 40.0)), 60.0, "q")
    texts = [realistic_response(rng, 60.0) for _ in range(bs)]
    config = RewardConfig(components=("format", "iou", "accuracy"))

    from zoomzero_plugin.synthetic.tiny_qwen import build_tokenizer

    tokenizer = build_tokenizer()
    ids = [tokenizer(t, add_special_tokens=False).input_ids[:length] for t in texts]
    pad = tokenizer.pad_token_id
    response_ids = torch.tensor([i + [pad] * (length - len(i)) for i in ids])
    response_mask = torch.tensor([[1] * len(i) + [0] * (length - len(i)) for i in ids])
    masker = GlueTokenMasker(tokenizer)

    t_tokenadv = median_ms(lambda: token_adv(comps, glue, mask, index), args.repeats)
    t_grpo = median_ms(lambda: grpo_advantage(overall, mask, index), args.repeats)
    t_rewards = median_ms(lambda: [score_response(t, truth, config) for t in texts], args.repeats)
    t_mask = median_ms(lambda: GlueTokenMasker(tokenizer)(response_ids, response_mask), max(5, args.repeats // 3))
    t_mask_warm = median_ms(lambda: masker(response_ids, response_mask), args.repeats)
    print_table(
        f"zoomzero-plugin core, {bs} responses x {length} tokens, groups of {group}, CPU, 1 thread (median ms)",
        [
            ("TokenAdv (4 components)", f"{t_tokenadv:8.2f} ms"),
            ("GRPO on summed reward", f"{t_grpo:8.2f} ms"),
            ("TokenAdv / GRPO", f"{t_tokenadv / t_grpo:8.2f} x"),
            ("parse + rewards (format, iou, accuracy)", f"{t_rewards:8.2f} ms"),
            ("glue token masks, cold piece cache", f"{t_mask:8.2f} ms"),
            ("glue token masks, warm piece cache", f"{t_mask_warm:8.2f} ms"),
        ],
    )


if __name__ == "__main__":
    main()
