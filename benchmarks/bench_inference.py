"""Inference benchmarks: wall time of the zoom modes against one-stage, and what a zoom pass decodes.

1. Modes. The same backend (transformers on CPU, the tiny random Qwen2.5-VL) and the same synthetic
   long videos (one coloured square during a ``--clue-seconds`` clue). A random model writes no spans,
   so grounding passes are scripted to return the ground-truth clue (window-relative for windows),
   through :class:`~zoomzero_plugin.inference.scripted.ScriptedBackend`: every pass still decodes,
   encodes and generates for real, only its words are chosen. Ratios are wall time / one-stage's
   (paper: coarse-to-fine 1.4×, divide-and-conquer 2.3×; goals ≤1.3× and ≤2.0×).
2. Decode. Decoding the fine pass's span (its zoom plan) against decoding the whole video (the coarse
   plan), for spans covering a growing fraction of the video (goal: time proportional to the fraction).

    python benchmarks/bench_inference.py            # 3 videos of 300 s; ~6 min on 2 CPU cores
    python benchmarks/bench_inference.py --quick    # 2 videos of 120 s, 60-s windows; ~2 min
    .venv-vllm/bin/python benchmarks/bench_inference.py --backend vllm   # vLLM's CPU engine (install-cpu.sh --vllm)

With ``--backend vllm`` every pass of a mode is one engine call over all questions (their fine passes batched
together), vLLM's prefix cache is on (its default), and the tiny model is the head-32 variant vLLM's CPU
attention takes; the goals are ≤1.2× (coarse-to-fine) and ≤1.6× (divide-and-conquer).

The tiny model's compute is negligible next to decoding, so on CPU the ratios mostly measure video
decoding and processing; the per-step columns let one extrapolate to a 7B model on GPU.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable  # noqa: E402

ensure_torchvision_importable()

from _timing import fastest  # noqa: E402

from zoomzero_plugin.gvqa.prompts import grounding_row  # noqa: E402
from zoomzero_plugin.gvqa.zoom import ZoomBudget, fetch_plan, plan_coarse, plan_zoom  # noqa: E402
from zoomzero_plugin.inference.modes import ModeConfig, predict  # noqa: E402
from zoomzero_plugin.inference.passes import Question  # noqa: E402
from zoomzero_plugin.inference.scripted import ScriptedBackend, template  # noqa: E402
from zoomzero_plugin.rows import read_rows, row_truth, write_rows  # noqa: E402
from zoomzero_plugin.synthetic.videos import COLORS, Evidence, write_video  # noqa: E402
from zoomzero_plugin.video_store import shared  # noqa: E402


def long_benchmark(
    directory: Path, n: int, seconds: float, width: int, height: int, fps: int, clue: float, seed: int = 0
) -> Path:
    """``n`` videos of ``seconds`` with one ``clue``-second evidence span each, and their rows; the videos are cached
    in ``directory`` (written only where missing), the rows written afresh (they hold the videos' absolute paths)."""
    rows_path = directory / f"rows-{n}x{seconds:g}s-{width}x{height}@{fps}.jsonl"
    rng, names, rows = random.Random(seed), sorted(COLORS), []
    for i in range(n):
        start = round(rng.uniform(0.05 * seconds, 0.95 * seconds - clue), 1)
        options = rng.sample(names, 4)
        video = directory / f"long{i:02d}-{seconds:g}s-{width}x{height}@{fps}.mp4"
        if not video.exists():
            write_video(video, seconds, fps, width, height, [Evidence(start, start + clue, options[0])])
        rows.append(
            grounding_row(
                qid=f"long{i:02d}",
                question="What colour is the square?",
                options=options,
                answer="A",
                spans=[(start, start + clue)],
                duration=seconds,
                video=str(video.resolve()),
            )
        )
    write_rows(rows_path, rows)
    return rows_path


def oracle(truths: dict[str, object]):
    """Script: every grounding pass names the true clue where the pass sees it, in the times its prompt asks for;
    a pass that does not see it answers with low confidence and no span.

    A prompt that names the seconds it shows (``part_prompt``: refinement rounds, absolute windows) asks for times of
    the whole video; any other prompt (the coarse pass, a relative window) presents its clip as a video from 0."""

    def script(request, _):
        if request.choices:
            return None
        truth = truths[request.videos[0]["video"]]
        shown = [(v["video_start"], v["video_end"]) for v in request.videos]
        inside = [(max(s, a), min(e, b)) for s, e in truth.spans for a, b in shown if min(e, b) > max(s, a)]
        if not inside:
            return "<answer>B</answer>", 0.1
        if "of the whole video" not in request.prompt:  # times from the clip's own 0
            inside = [(s - shown[0][0], e - shown[0][0]) for s, e in inside]
        return template(truth.answer, inside), 0.9

    return script


def bench_modes(backend, rows: list[dict], cfg: ModeConfig, repeat: int) -> list[tuple]:
    questions = [Question.from_row(r) for r in rows]
    scripted = ScriptedBackend(backend, oracle({r["videos"][0]: row_truth(r) for r in rows}))
    variants = [
        ("one-stage", "one-stage", cfg),
        ("coarse-to-fine", "coarse-to-fine", cfg),
        ("divide-and-conquer", "divide-and-conquer", cfg),
        ("d&c, split budget", "divide-and-conquer", replace(cfg, window_budget="split")),
        ("iterative (3 rounds)", "iterative", cfg),
    ]
    predict(scripted, questions[:1], "one-stage", cfg)  # warm-up: lazy imports, first decode
    llm = getattr(backend, "llm", None)
    store = shared()

    def fresh() -> None:  # every run as on questions never seen: no prefix (vLLM) and no frame kept from before
        store.clear()
        if llm is not None:
            llm.reset_prefix_cache()

    def run(mode, c):
        before = store.stats()
        return predict(scripted, questions, mode, c), store.stats().minus(before)

    best = fastest({label: (lambda m=mode, c=c: run(m, c)) for label, mode, c in variants}, repeat, before=fresh)
    table = []
    for label, _, _ in variants:
        wall, (preds, work) = best[label]
        steps = {
            k: sum(t[k] for p in preds for t in p.timing["passes"]) for k in ("decode_s", "prepare_s", "generate_s")
        }
        passes = [x for p in preds for x in p.record["passes"]]
        table.append(
            (
                label,
                wall,
                steps,
                len(passes) / len(preds),
                sum(x["frames"] for x in passes) / len(preds),
                sum(x["video_tokens"] for x in passes) / len(preds),
                work,
            )
        )
    return table


def bench_decode(video: str, duration: float, budget: ZoomBudget, fractions: list[float], repeat: int) -> list[tuple]:
    """(fraction, fine frames, best span decode s, best whole decode s[, note]) per span; timed round-robin."""
    plans = {"whole": plan_coarse(duration, budget)}
    for f in fractions:
        start = (duration - f * duration) / 2
        plans[f] = plan_zoom([(start, start + f * duration)], duration, budget)
    plans["two"] = plan_zoom([(0.2 * duration, 0.25 * duration), (0.7 * duration, 0.75 * duration)], duration, budget)
    best: dict = {}
    for _ in range(repeat):
        for key, plan in plans.items():
            shared().clear()  # decoded afresh, not served from the store
            start = time.perf_counter()
            fetch_plan(plan, video)
            best[key] = min(best.get(key, float("inf")), time.perf_counter() - start)
    rows = [(f, plans[f].frames, best[f], best["whole"]) for f in fractions]
    return rows + [(0.1, plans["two"].frames, best["two"], best["whole"], "two 5% spans")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 videos of 120 s, 60-s windows")
    parser.add_argument(
        "--backend",
        choices=("transformers", "vllm"),
        default="transformers",
        help="transformers (batch 1) or vLLM's engine (all questions per call)",
    )
    parser.add_argument("--videos", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=300.0, help="video length (default: 300)")
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=180)
    parser.add_argument("--fps", type=int, default=25, help="source frame rate (libx264 keyframe every 250 frames)")
    parser.add_argument("--clue-seconds", type=float, default=10.0)
    parser.add_argument("--window-seconds", type=float, default=256.0)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-visual-tokens", type=int, default=8192, help="L_v (default: the paper's 8192)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; the fastest is reported")
    parser.add_argument(
        "--workdir",
        default=str(Path(tempfile.gettempdir()) / "zoomzero-bench"),
        help="videos and the tiny model are cached here",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.videos, args.seconds, args.window_seconds = 2, 120.0, 60.0
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)

    from zoomzero_plugin.inference.hf_backend import TransformersBackend
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    vllm = args.backend == "vllm"
    model_dir = work / ("tiny-qwen-vllm" if vllm else "tiny-qwen")
    if not (model_dir / "config.json").exists():
        build_tiny_qwen(model_dir, for_vllm=vllm)
    t0 = time.perf_counter()
    rows = read_rows(
        long_benchmark(work, args.videos, args.seconds, args.width, args.height, args.fps, args.clue_seconds)
    )
    print(
        f"data: {len(rows)} synthetic videos of {args.seconds:g} s, {args.width}x{args.height} @ {args.fps} fps, "
        f"{args.clue_seconds:g}-s clue (ready in {time.perf_counter() - t0:.0f} s)"
    )
    if vllm:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
        from zoomzero_plugin.inference.vllm_backend import VLLMBackend

        backend = VLLMBackend(
            str(model_dir), batch_size=256, enforce_eager=True, max_model_len=args.max_visual_tokens + 2048, seed=0
        )
    else:
        backend = TransformersBackend(str(model_dir), device="cpu", batch_size=1)
    budget = ZoomBudget(max_visual_tokens=args.max_visual_tokens, fps=1.0, max_frames=256)
    cfg = ModeConfig(budget=budget, max_new_tokens=args.max_new_tokens, window_seconds=args.window_seconds)
    n_windows = -(-int(args.seconds) // int(args.window_seconds))
    engine = "vLLM (CPU engine, all questions per call, prefix cache on)" if vllm else "transformers, batch 1"
    print(
        f"backend: {engine}, CPU, tiny random Qwen2.5-VL; L_v={args.max_visual_tokens}, 1 fps, ≤256 frames, "
        f"{args.window_seconds:g}-s windows ({n_windows} per video), top-4, responses {args.max_new_tokens} tokens; "
        f"torch threads {os.environ['OMP_NUM_THREADS']}\n"
    )

    load = os.getloadavg()[0]
    table = bench_modes(backend, rows, cfg, args.repeat)
    base = table[0][1]
    print(
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (fastest of {args.repeat}; "
        "opens, frames decoded and from memory: the video store's counts in that run)"
    )
    print(
        "| mode | wall s | × one-stage | decode s | prepare s | generate s | passes/q | frames/q | video tokens/q | "
        "opens | frames decoded | from memory |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, wall, steps, passes, frames, tokens, work in table:
        print(
            f"| {label} | {wall:.2f} | {wall / base:.2f}× | {steps['decode_s']:.2f} | {steps['prepare_s']:.2f} | "
            f"{steps['generate_s']:.2f} | {passes:.1f} | {frames:.0f} | {tokens:.0f} | {work.opens} | "
            f"{work.frames_decoded} | {work.hits} |"
        )

    video, duration = rows[0]["videos"][0], row_truth(rows[0]).duration
    decode = bench_decode(video, duration, budget, [0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0], args.repeat)
    print(
        f"\nDecode (qwen-vl-utils + decord, best of {args.repeat}): fine-pass plan of a span vs coarse plan of the "
        "whole "
        f"{duration:g}-s video"
    )
    print("| span fraction | fine frames | span decode s | whole decode s | time ratio | ratio / fraction |")
    print("|---|---|---|---|---|---|")
    for f, frames, t_span, t_whole, *note in decode:
        label = f"{f:.0%}" + (f" ({note[0]})" if note else "")
        print(
            f"| {label} | {frames} | {t_span:.3f} | {t_whole:.3f} | {t_span / t_whole:.3f} | "
            f"{t_span / t_whole / f:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
