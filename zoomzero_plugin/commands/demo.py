"""Run one Zoom-Zero training step's reward and advantage logic on CPU with a tiny random Qwen-VL (Qwen2.5-VL by
default, Qwen3-VL with ``--model qwen3-vl``).

Builds a tiny model and a synthetic video question (the evidence is a coloured square in a known span),
samples a group of responses in the paper's template, runs the zoom-in pass on each response's predicted
spans with the same model, and prints every response's spans, its four rewards, its GRPO advantage (on
the summed reward) and its TokenAdv advantages on glue tokens vs the other tokens. With ``--eval`` it then
evaluates the tiny model coarse-to-fine on a small synthetic benchmark (``zoomzero eval --demo``) and
prints the report; predictions, metrics and plots stay in the work folder (``./zoomzero-demo`` unless
``--workdir`` says otherwise). With ``--agent`` it runs VideoZoomer's ``<video_zoom>`` agent instead: the tiny
model (template-constrained) calls the tool on a synthetic long video — an error turn, a clip, an answer — and
the transcript, budgets and reward are printed. With ``--train`` it trains instead: a tiny model warm-started in
seconds runs the shipped recipe (``--agent``: VideoZoomer's) through ``easyr1 train --cpu`` for a few GRPO steps, one
line per step, then merges and evaluates it (the vLLM environment: ``bash scripts/install-cpu.sh --vllm``). Nothing is
downloaded.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ..cpu_compat import ensure_torchvision_importable
from ..errors import UsageError
from ..gvqa.parsing import parse_response
from ..gvqa.prompts import grounding_prompt, zoom_prompt
from ..gvqa.zoom import fetch_plan
from ..rows import read_rows, row_truth
from ..synthetic.benchmark import make_benchmark
from ..synthetic.tiny_qwen import build_tiny_qwen
from ..vision import VisionGeometry
from .cli import main as zoomzero
from .train_demo import check_can_train, run_train_demo

EVAL_WORKDIR = "zoomzero-demo"  # --eval's default work folder, relative to the current directory
TRAIN_WORKDIR = "zoomzero-demo/train"  # --train's: one folder per model family (and agent) inside
MODELS = {"qwen2.5-vl": "qwen2_5_vl", "qwen3-vl": "qwen3_vl"}  # --model: the tiny model's family
DEMO_MODEL = "tiny-qwen"  # the tiny model's folder under --workdir
DEMO_FRAME_TOKENS = (2, 384)  # the demo's per-frame bounds, tokens (its 96-token budget needs small frames)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--group-size", type=int, default=6, help="responses sampled for the question (default 6)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the model weights, video and sampling")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help=f"where the tiny model, video and evaluation are written (default: a temporary folder, "
        f"deleted at the end; with --eval, ./{EVAL_WORKDIR})",
    )
    parser.add_argument(
        "--eval",
        action="store_true",
        help="also run a full coarse-to-fine evaluation on a synthetic benchmark and print its "
        f"report (about 30 s more); its files are kept in --workdir (default ./{EVAL_WORKDIR})",
    )
    parser.add_argument(
        "--model",
        choices=sorted(MODELS),
        default="qwen2.5-vl",
        help="the tiny random model's family: qwen2.5-vl (14-px patches, time in M-RoPE) or qwen3-vl "
        "(16-px patches, frame timestamps in the prompt); default qwen2.5-vl",
    )
    parser.add_argument(
        "--agent",
        action="store_true",
        help="run VideoZoomer's <video_zoom> agent loop instead: overview, an error turn, a clip, "
        "an answer; prints the transcript, budgets used and reward components",
    )
    train = parser.add_argument_group("--train: a short RL run of a shipped recipe (in the vLLM environment)")
    train.add_argument(
        "--train",
        action="store_true",
        help="build and warm-start the tiny model, train it with `easyr1 train yamls/zoomzero.yaml --cpu` (with "
        "--agent: videozoomer.yaml; --model qwen3-vl: the _qwen3vl recipes, on EasyR1 main) for --steps steps, "
        f"one line per step, then merge and evaluate it; files in --workdir (default ./{TRAIN_WORKDIR}); ~3 min. "
        "Needs the vLLM environment: bash scripts/install-cpu.sh --vllm",
    )
    train.add_argument("--steps", type=int, default=4, help="GRPO steps of --train (default 4)")
    train.add_argument(
        "--clip-as",
        choices=("images", "video"),
        default="images",
        help="--train --agent: a call's clip as labelled images (the authors') or as one video (default images)",
    )


def run(args: argparse.Namespace) -> int:
    if args.train:
        return _train(args)
    if args.group_size < 2:
        raise UsageError("--group-size must be at least 2 (advantages compare responses in a group)")
    if args.agent:
        return _agent(args)
    if args.workdir is None and args.eval:
        args.workdir = Path(EVAL_WORKDIR)  # the evaluation's files are worth keeping: its report lists them
    if args.workdir is None:
        with tempfile.TemporaryDirectory(prefix="zoomzero-demo-") as tmp:
            _demo(args, Path(tmp))
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    _demo(args, args.workdir)
    return _evaluation(args.workdir) if args.eval else 0


def _train(args: argparse.Namespace) -> int:
    if args.steps < 1:
        raise UsageError("--steps must be at least 1")
    check_can_train(MODELS[args.model])  # before anything is built: one line where this environment cannot train
    workdir = args.workdir or Path(TRAIN_WORKDIR) / (args.model + ("-agent" if args.agent else ""))
    return run_train_demo(workdir, MODELS[args.model], args.agent, args.steps, args.seed, args.clip_as)


def _agent(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")

    ensure_torchvision_importable()
    from .agent_demo import run_agent_demo

    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        run_agent_demo(args.workdir, args.seed, args.temperature, MODELS[args.model])
    else:
        with tempfile.TemporaryDirectory(prefix="zoomzero-agent-demo-") as tmp:
            run_agent_demo(Path(tmp), args.seed, args.temperature, MODELS[args.model])
    return 0


def _demo(args: argparse.Namespace, workdir: Path) -> None:
    import os

    os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")

    ensure_torchvision_importable()
    import torch

    from .. import RewardConfig
    from ..synthetic.template_sampler import TinyVideoLM

    t0 = time.perf_counter()
    torch.manual_seed(args.seed)
    lm = TinyVideoLM.load(build_tiny_qwen(workdir / DEMO_MODEL, seed=args.seed, family=MODELS[args.model]))
    config = RewardConfig(components=("format", "iou", "accuracy", "zoom"))
    rows, ids = _sample_group(lm, *_question(lm, workdir, args.seed), args, config)
    _print_group(rows, ids, lm.processor.tokenizer, config)
    print(
        "\nGRPO gives every token of a response one advantage; TokenAdv gives glue tokens "
        "mean(A_format, A_zoom, A_iou) and the others mean(A_format, A_zoom, A_acc)."
    )
    print(f"Done in {time.perf_counter() - t0:.1f} s.")


def _question(lm, workdir: Path, seed: int) -> tuple:
    """The synthetic question, its video, the demo's budget and the coarse pass's context; prints them."""
    from .. import ZoomBudget, plan_coarse

    row = read_rows(make_benchmark(workdir / "bench", n_videos=1, seed=seed))[0]
    truth, video = row_truth(row), row["videos"][0]
    geometry = VisionGeometry.of(lm.processor)
    low, high = (geometry.frame_pixels(t) for t in DEMO_FRAME_TOKENS)
    budget = ZoomBudget(max_visual_tokens=96, min_frame_pixels=low, max_frame_pixels=high, fps=2.0)
    budget = budget.with_geometry(geometry)
    coarse = plan_coarse(truth.duration, budget)
    ctx = lm.context(grounding_prompt(truth.question, truth.options, truth.duration), fetch_plan(coarse, video))
    letters = "ABCD"[: len(truth.options)]
    print(
        f"Question: {truth.question}  options: "
        + ", ".join(f"({label}) {o}" for label, o in zip(letters, truth.options))
    )
    print(f"Truth: ({truth.answer}), evidence at {_fmt(truth.spans)} of a {truth.duration:.0f} s video")
    print(
        f"Coarse pass: {coarse.frames} frames at {coarse.tokens_per_frame:.1f} tokens/frame "
        f"(budget {budget.max_visual_tokens} visual tokens)\n"
    )
    return truth, video, budget, ctx


def _sample_group(lm, truth, video: str, budget, ctx, args: argparse.Namespace, config) -> tuple[list, list]:
    """``--group-size`` responses in the paper's template, each zoomed in on its own spans and scored."""
    import random

    from .. import plan_zoom, score_parsed
    from ..synthetic.template_sampler import sample_grounded_response

    rng = random.Random(args.seed)
    letters = "ABCD"[: len(truth.options)]
    rows, ids = [], []
    for _ in range(args.group_size):
        text, generated = sample_grounded_response(lm, ctx, truth.duration, letters, rng, args.temperature)
        parsed = parse_response(text, truth.duration)
        zoom = plan_zoom(parsed.spans, truth.duration, budget)
        zoom_answer = None
        if zoom is not None:  # the fine pass sees only the predicted spans, at more tokens per frame
            zctx = lm.context(
                "<video>" * len(zoom.clips) + zoom_prompt(truth.question, truth.options, video=False),
                fetch_plan(zoom, video),
            )
            zoom_answer = lm.choose(zctx, [], list(letters), rng, temperature=0)
        rows.append((parsed, zoom, zoom_answer, score_parsed(parsed, truth, config, zoom_answer)))
        ids.append(generated)
    return rows, ids


def _print_group(rows: list, ids: list, tokenizer, config) -> None:
    """Each response's spans, zoom pass, rewards, GRPO advantage and TokenAdv advantages on glue vs other tokens."""
    import torch

    from .. import GlueTokenMasker, grpo_advantage, token_adv

    width = max(len(i) for i in ids)
    response_ids = torch.tensor([i + [tokenizer.pad_token_id] * (width - len(i)) for i in ids])
    response_mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i in ids])
    glue = GlueTokenMasker(tokenizer)(response_ids, response_mask)
    index = ["q0"] * len(rows)
    comps = {k: torch.tensor([r[3][k] for r in rows]) for k in config.components}
    tadv, _ = token_adv(comps, glue, response_mask, index)
    gadv, _ = grpo_advantage(torch.tensor([r[3]["overall"] for r in rows]), response_mask, index)

    header = (
        f"{'#':>2}  {'glue spans':<14} {'ans':>3} {'zoom pass':<16} {'format':>6} {'iou':>5} {'acc':>4} "
        f"{'zoom':>4} {'overall':>7} | {'GRPO adv':>8} | {'TokenAdv glue':>13} {'other':>6}"
    )
    print(header)
    print("-" * len(header))
    for i, (parsed, zoom, zoom_answer, s) in enumerate(rows):
        zp = f"{zoom.frames}f@{zoom.tokens_per_frame:.0f}t -> {zoom_answer}" if zoom else "no valid span"
        g, other = glue[i] & response_mask[i].bool(), ~glue[i] & response_mask[i].bool()
        spans = _fmt(parsed.spans) if not parsed.invalid_spans else f"invalid ({parsed.invalid_spans})"
        print(
            f"{i + 1:>2}  {spans:<14} {parsed.answer or '-':>3} {zp:<16} {s['format']:>6.2f} "
            f"{s['iou']:>5.2f} {s['accuracy']:>4.0f} {s['zoom']:>4.0f} {s['overall']:>7.3f} | "
            f"{gadv[i, 0]:>+8.3f} | {_mean(tadv[i][g]):>+13.3f} {_mean(tadv[i][other]):>+6.3f}"
        )
        if parsed.spans and not g.any():
            raise RuntimeError(f"response {i + 1} has glue spans but no glue tokens were found")


def _evaluation(workdir: Path) -> int:
    """``zoomzero eval --demo`` coarse-to-fine into ``workdir/eval`` on the demo's own tiny model (the family of
    ``--model``); it prints the metric table."""
    out = workdir / "eval"
    print(f"\nEvaluating the tiny model coarse-to-fine on a synthetic benchmark -> {out}")
    code = zoomzero(
        [
            "eval",
            "--demo",
            "--model",
            str(workdir / DEMO_MODEL),
            "--mode",
            "coarse-to-fine",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    if code == 0:
        print("Files:", ", ".join(sorted(p.name for p in out.iterdir() if p.is_file())))
    return code


def _fmt(spans) -> str:
    return "[" + ", ".join(f"({s:g}, {e:g})" for s, e in spans) + "]" if spans else "[]"


def _mean(x) -> float:
    return float(x.mean()) if x.numel() else float("nan")
