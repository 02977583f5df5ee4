"""VideoZoomer agent benchmarks: agent evaluation vs one-stage and vs no tool, per-clip decode cost, parser throughput.

1. Agent vs one-stage vs no tool. The same backend (transformers on CPU, the tiny random Qwen2.5-VL, batch 1) and
   the same synthetic long videos as bench_inference.py. Scripted words (the random model never calls the tool):
   the agent calls ``<video_zoom>`` once on the clue at up to 16 frames, then answers; one-stage's grounding
   pass names the clue; the no-tool baseline (``--no-tool``: the authors' eval_video_notool.sh setting, the video
   as one video at 0.2 fps) answers at once. Everything else is real: frame decoding, the processor, generation.
   Goal: agent wall time ≤ 1.6× one-stage's (only the clip's frames are decoded again).
   With ``--model CKPT --data ROWS`` the tool-vs-no-tool comparison runs on a real checkpoint instead (its own
   words, greedy, the paper's budgets): accuracy with and without the tool, calls, frames and time, one table —
   the paper's ablation in one command.
2. Per-clip decode. :class:`~zoomzero_plugin.agent.frames.FrameReader` reading one clip of N frames from videos
   of growing length (goal: time grows with the frames asked for, not with the video's length).
3. ``agent.clip_as``: the same questions and calls with each clip as labelled images (the authors') or as one
   video, on the tiny Qwen2.5-VL and the tiny Qwen3-VL: visual tokens per clip and agent wall time.
4. Parser throughput. ``parse_turn``, ``split_response`` and the trajectory reward on 1 MB inputs, realistic and
   degenerate (RL policies repeat themselves), in MB/s.
5. ``--backend vllm``: round by round vs continuous (``--agent-schedule``) on vLLM's CPU engine, side by side in one
   run. The tiny head-32 model writes every turn itself, greedy, held to a scripted text by vLLM's structured outputs
   (a regex of exactly that text): turns of different lengths over several rounds — each trajectory makes three
   calls of 16 frames and answers, and one of its four turns is long (``--long-words`` words of thinking, the others
   ``--short-words``), the long turn falling in a different round for different questions, as when some
   trajectories think at length in one round and others in the next. Per schedule: wall time for the whole batch
   (one "step"), the seconds inside engine steps and the engine's idle fraction, steps and requests per step, frame
   decoding (seconds, video opens, frames decoded and served from memory), and whether the two schedules' predictions
   are equal. Goal: continuous >= 1.3x faster at equal outputs.

    python benchmarks/bench_agent.py            # 3 videos of 300 s; ~5 min on 2 CPU cores
    python benchmarks/bench_agent.py --quick    # 2 videos of 120 s
    python benchmarks/bench_agent.py --quick --clip-as-only   # agent.clip_as: images vs video, both tiny families
    python benchmarks/bench_agent.py --model zsgvivo/videozoomer --data lvb_val.jsonl --limit 200 --device cuda
    .venv-vllm/bin/python benchmarks/bench_agent.py --backend vllm   # round by round vs continuous (~5 min)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")

from zoomzero_plugin.cpu_compat import ensure_torchvision_importable  # noqa: E402

ensure_torchvision_importable()

from _timing import fastest, median_ms  # noqa: E402
from bench_inference import long_benchmark, oracle  # noqa: E402

from zoomzero_plugin.agent import AgentBudget, parse_turn, score_response, split_response  # noqa: E402
from zoomzero_plugin.agent.baseline import NO_TOOL_BUDGET  # noqa: E402
from zoomzero_plugin.agent.frames import FrameReader  # noqa: E402
from zoomzero_plugin.errors import EXIT_USER, ZoomzeroError, one_line  # noqa: E402
from zoomzero_plugin.gvqa.zoom import ZoomBudget  # noqa: E402
from zoomzero_plugin.inference.agent import AgentConfig  # noqa: E402
from zoomzero_plugin.inference.modes import ModeConfig, predict  # noqa: E402
from zoomzero_plugin.inference.passes import Question  # noqa: E402
from zoomzero_plugin.inference.scripted import ScriptedBackend  # noqa: E402
from zoomzero_plugin.rows import read_rows, row_truth  # noqa: E402
from zoomzero_plugin.synthetic.videos import write_video  # noqa: E402
from zoomzero_plugin.video_store import VideoStore, shared  # noqa: E402


def agent_script(truths: dict[str, object]):
    """Round 0: a call on the clue, 16 frames at most; round 1: the answer."""

    def script(request, _):
        qid, round_ = request.tag.split("#")
        truth = truths[qid]
        if round_ == "0":
            start, end = truth.spans[0]
            fps = 16 / (end - start)
            return (
                f'<think>The clue.</think><video_zoom>{{"segment": [{start:g}, {end:g}], "fps": {fps:g}}}</video_zoom>'
            )
        return f"<think>Seen.</think><answer>{truth.answer}</answer>"

    return script


def no_tool_script(truths: dict[str, object]):
    """The no-tool baseline's one reply: the answer."""
    return lambda request, _: f"<think>Seen.</think><answer>{truths[request.tag].answer}</answer>"


def bench_agent_vs_one_stage(backend, rows, args) -> list[tuple]:
    questions = [Question.from_row(r) for r in rows]
    truths = {t.qid: t for t in map(row_truth, rows)}
    one = ScriptedBackend(backend, oracle({r["videos"][0]: row_truth(r) for r in rows}))
    agent = ScriptedBackend(backend, agent_script(truths))
    no_tool = ScriptedBackend(backend, no_tool_script(truths))
    cfg = ModeConfig(
        budget=ZoomBudget(max_visual_tokens=args.max_visual_tokens, fps=1.0, max_frames=256),
        max_new_tokens=args.max_new_tokens,
        agent=AgentConfig(budget=AgentBudget(max_new_tokens=args.max_new_tokens)),
    )
    baseline = replace(
        cfg, agent=AgentConfig(budget=replace(NO_TOOL_BUDGET, max_new_tokens=args.max_new_tokens), tool=False)
    )
    predict(one, questions[:1], "one-stage", cfg)  # warm-up
    best = fastest(
        {
            "one-stage": lambda: predict(one, questions, "one-stage", cfg),
            "agent (1 call + answer)": lambda: predict(agent, questions, "agent", cfg),
            "agent, no tool (authors' baseline)": lambda: predict(no_tool, questions, "agent", baseline),
        },
        args.repeat,
        before=shared().clear,
    )  # every run on videos nothing has decoded yet
    table = []
    for label, (wall, preds) in best.items():
        if label == "one-stage":
            decode = sum(t["decode_s"] for p in preds for t in p.timing["passes"])
            frames = sum(x["frames"] for p in preds for x in p.record["passes"])
            tokens = sum(x["video_tokens"] for p in preds for x in p.record["passes"])
        else:
            decode = sum(p.timing["decode_s"] for p in preds)
            frames = sum(p.record["frames"] for p in preds)
            tokens = None
        table.append((label, wall, decode, frames / len(preds), tokens / len(preds) if tokens is not None else None))
    return table


def bench_clip_as(backends: dict[str, object], rows, args) -> list[tuple]:
    """The same questions and scripted calls with the clip as labelled images or as one video, per model family,
    run round-robin: (family, clip_as, wall s, visual tokens per clip, prompt tokens of the answer turn per q)."""
    questions = [Question.from_row(r) for r in rows]
    truths = {t.qid: t for t in map(row_truth, rows)}

    def variant(backend, clip_as):
        cfg = ModeConfig(agent=AgentConfig(budget=AgentBudget(max_new_tokens=args.max_new_tokens), clip_as=clip_as))

        def run():
            scripted = ScriptedBackend(backend, agent_script(truths))
            predict(scripted, questions, "agent", cfg)
            return {request.tag: gen for request, gen in scripted.calls}

        return run

    table = []
    for family, backend in backends.items():
        best = fastest({clip_as: variant(backend, clip_as) for clip_as in ("images", "video")}, args.repeat)
        for clip_as, (wall, calls) in best.items():
            answer_turns = [calls[f"{q.qid}#1"] for q in questions]
            clip = [
                g.image_tokens + g.video_tokens - calls[f"{q.qid}#0"].image_tokens
                for q, g in zip(questions, answer_turns)
            ]
            table.append(
                (
                    family,
                    clip_as,
                    wall,
                    sum(clip) / len(clip),
                    sum(g.prompt_tokens for g in answer_turns) / len(questions),
                )
            )
    return table


def compare_tool(backend, rows, args) -> list[tuple]:
    """The checkpoint's own words with and without the tool (greedy, the paper's budgets): (label, accuracy %,
    answered %, calls/q, frames/q, wall s)."""
    questions = [Question.from_row(r) for r in rows]
    truths = {t.qid: t.answer for t in map(row_truth, rows)}
    table = []
    for label, agent in (("agent (tool)", AgentConfig()), ("no tool (eval_video_notool.sh)", AgentConfig.no_tool())):
        preds = []
        start = time.perf_counter()
        for i in range(0, len(questions), args.batch_size):
            preds += predict(backend, questions[i : i + args.batch_size], "agent", ModeConfig(agent=agent))
        wall = time.perf_counter() - start
        records = [p.record for p in preds]
        n = len(records)
        table.append(
            (
                label,
                100.0 * sum(r["answer"] == truths[r["qid"]] for r in records) / n,
                100.0 * sum(r["answer"] is not None for r in records) / n,
                sum(r["calls"] for r in records) / n,
                sum(r["frames"] for r in records) / n,
                wall,
            )
        )
    return table


def real_comparison(args) -> int:
    from zoomzero_plugin.inference.backend import load_backend

    rows = read_rows(args.data)[: args.limit]
    backend = load_backend("transformers", args.model, device=args.device, batch_size=args.batch_size)
    print(
        f"model: {args.model}; data: {args.data} ({len(rows)} questions); backend: transformers on "
        f"{backend.device}, batch {args.batch_size}, greedy; the paper's budgets "
        "(agent: 64-frame overview at 0.5 fps, "
        f"<=16 frames a call, <=5 assistant turns; no tool: <=120 frames at 0.2 fps as one video, one reply)\n"
    )
    print("| run | Acc % | answered % | calls / q | frames / q | wall s |")
    print("|---|---|---|---|---|---|")
    for label, acc, answered, calls, frames, wall in compare_tool(backend, rows, args):
        print(f"| {label} | {acc:.1f} | {answered:.1f} | {calls:.2f} | {frames:.1f} | {wall:.1f} |")
    return 0


def bench_decode(work: Path, lengths: list[float], frames: list[int], args) -> list[tuple]:
    """(video seconds, frames asked, ms per clip read, ms to open the video)."""
    out = []
    for seconds in lengths:
        path = work / f"decode-{seconds:g}s-{args.width}x{args.height}@{args.fps}.mp4"
        if not path.exists():
            write_video(path, seconds, args.fps, args.width, args.height)
        # each open on a store of its own (the process's keeps a video open); each read on a store that keeps its
        # readers but no frames: the time to open, and to decode a clip, not a read from memory
        open_ms = median_ms(lambda: FrameReader(str(path), VideoStore(max_bytes=0)), repeats=5, warmup=1)
        reader = FrameReader(str(path), VideoStore(max_bytes=0))
        for n in frames:
            mid = reader.info.frames // 2  # a clip of n frames over 4 s in the middle of the video
            indices = sorted({mid + round(k * 4 * reader.info.fps / max(n - 1, 1)) for k in range(n)})
            out.append((seconds, len(indices), median_ms(lambda: reader.read(indices), repeats=5, warmup=1), open_ms))
    return out


def bench_parsers() -> list[tuple]:
    mb = 1_000_000
    call = '<video_zoom>{"segment": [10.5, 14.5], "fps": 4}</video_zoom>'
    obs = (
        "<|im_end|><|im_start|>user\n<tool_response>\nThe frames of the video clip are shown below:\n"
        + "<frame0_time10.50s><|vision_start|><|image_pad|><|vision_end|>" * 16
        + "\n</tool_response>\ncontinue<|im_end|>\n<|im_start|>assistant\n"
    )
    think = "<think>" + "the man walks to the door and " * (mb // 30) + "</think>"
    turn = "<think>Look again at the door.</think>" + call
    inputs = {
        "long think + call": think + call,
        "'<video_zoom>' × 83k": "<video_zoom>" * (mb // 12),
        "'{' × 1M inside a call": "<think>x</think><video_zoom>" + "{" * mb + "</video_zoom>",
        "'<answer>' × 125k": "<answer>" * (mb // 8),
        "4-turn trajectory, padded to 1 MB": (turn + obs) * 3
        + think[: mb - 4 * len(turn + obs)]
        + "<answer>B</answer>",
        "'</video_zoom>user\\n' × 55k": "</video_zoom>user\n" * (mb // 18),
    }
    rows = []
    for name, text in inputs.items():
        size = len(text.encode()) / mb
        for fn_name, fn in (
            ("parse_turn", lambda t=text: parse_turn(t)),
            ("split_response", lambda t=text: split_response(t)),
            ("reward", lambda t=text: score_response(t, "B")),
        ):
            ms = median_ms(fn, repeats=3, warmup=1)
            rows.append((name, fn_name, size, ms, size / (ms / 1e3)))
    return rows


def scripted_turn(k: int, turn: int, truth, args) -> str:
    """Question k's turn: three calls on 8-s stretches around the clue at 2 fps (16 frames), then the answer; the
    think of turn ``k % 4`` is long."""
    words = args.long_words if turn == k % 4 else args.short_words
    think = " ".join(f"w{(k + turn + i) % 10}" for i in range(words))
    if turn == 3:
        return f"<think>{think}</think><answer>{truth.answer}</answer>"
    start = max(0.0, truth.spans[0][0] - 8.0 + 8.0 * turn)
    return f'<think>{think}</think><video_zoom>{{"segment": [{start:g}, {start + 8:g}], "fps": 2}}</video_zoom>'


def schedule_comparison(model_dir: Path, rows, args) -> tuple[list[tuple], bool, list[float]]:
    """Round by round vs continuous on vLLM (section 5 of the module docstring): (schedule, wall s, engine s, steps,
    mean requests per step, decode s, store counters, turn tokens) per run, outputs equal, load averages."""
    import re

    from vllm.sampling_params import StructuredOutputsParams

    from zoomzero_plugin.engine.stream import EngineMeter, metered
    from zoomzero_plugin.inference.vllm_backend import VLLMBackend

    backend = VLLMBackend(
        str(model_dir), batch_size=256, max_images=128, enforce_eager=True, seed=0, max_model_len=16384, dtype="float32"
    )  # structured outputs want float32 logits on a CPU
    questions = [Question.from_row(r) for r in rows]
    truths = {q.qid: (k, row_truth(r)) for k, (q, r) in enumerate(zip(questions, rows))}
    params = backend._params

    def steered(request, sampling):
        qid, turn = request.tag.split("#")
        k, truth = truths[qid]
        out = params(request, sampling)
        text = scripted_turn(k, int(turn), truth, args)
        out.structured_outputs = StructuredOutputsParams(regex=re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text))
        return out

    backend._params = steered
    budget = AgentBudget(max_new_tokens=4 * args.long_words + 64)
    configs = {s: ModeConfig(agent=AgentConfig(budget=budget, schedule=s)) for s in ("rounds", "continuous")}
    predict(backend, questions[:1], "agent", configs["rounds"])  # warm-up
    loads, table, records = [os.getloadavg()[0]], [], {}
    for _ in range(args.repeat):
        for schedule, cfg in configs.items():  # side by side, alternating: the machine is shared
            shared().clear()  # every step brings videos nothing has decoded yet
            before, start = shared().stats(), time.perf_counter()
            with metered(backend.llm, EngineMeter()) as meter:
                preds = predict(backend, questions, "agent", cfg)
            wall, work = time.perf_counter() - start, shared().stats().minus(before)
            records[schedule] = [p.record for p in preds]
            tokens = [t["tokens"] for p in preds for t in p.record["transcript"]["turns"]]
            table.append((schedule, wall, meter.busy_s, meter.steps, meter.mean_batch, work, tokens))
    loads.append(os.getloadavg()[0])
    return table, records["rounds"] == records["continuous"], loads


def print_schedules(model_dir: Path, rows, args) -> None:
    table, equal, loads = schedule_comparison(model_dir, rows, args)
    print(
        f"Round by round vs continuous on vLLM's CPU engine (0.11, tiny head-32 Qwen2.5-VL, float32, greedy); "
        f"{len(rows)} questions x 4 turns (3 calls of 16 frames, then the answer), one turn of each "
        f"{args.long_words} words of thinking, the others {args.short_words}; load average {loads[0]:.1f} at the "
        f"start, {loads[1]:.1f} at the end; other engineers' work shares the 2 cores\n"
    )
    print(
        "| run | schedule | wall s | engine s | engine idle | steps | requests/step | decode s | opens | "
        "frames decoded | from memory | tokens/turn (min-max) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for i, (schedule, wall, busy, steps, batch, work, tokens) in enumerate(table):
        print(
            f"| {i // 2 + 1} | {schedule} | {wall:.2f} | {busy:.2f} | {1 - busy / wall:.0%} | {steps} | "
            f"{batch:.1f} | {work.decode_s:.2f} | {work.opens} | {work.frames_decoded} | {work.hits} | "
            f"{min(tokens)}-{max(tokens)} |"
        )
    walls = {s: [w for name, w, *_ in table if name == s] for s in ("rounds", "continuous")}
    ratios = [r / c for r, c in zip(walls["rounds"], walls["continuous"])]
    print(
        f"\ncontinuous vs round by round, per run: {', '.join(f'{r:.2f}x' for r in ratios)} faster "
        f"(goal >= 1.3x); outputs equal: {'yes' if equal else 'NO'}"
    )


def clip_as_table(work: Path, rows, args) -> None:
    """``agent.clip_as``: images vs video on the tiny Qwen2.5-VL and the tiny Qwen3-VL, the same questions."""
    from zoomzero_plugin.inference.hf_backend import TransformersBackend
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    backends = {}
    for family in ("qwen2_5_vl", "qwen3_vl"):
        folder = work / f"tiny-{family}-checkpoint-pixels"
        if not (folder / "config.json").exists():  # a released checkpoint's pixel bounds (small frames kept small)
            build_tiny_qwen(folder, family=family, for_vllm=True)
        backends[family] = TransformersBackend(str(folder), device="cpu", batch_size=1)
    print(
        f"\nagent.clip_as: the call's clip (<=16 frames of <=100,352 px) as labelled images or as one video; "
        f"the same {len(rows)} questions, scripted (1 call, then the answer), transformers on CPU, batch 1"
    )
    print("| model | clip_as | wall s | visual tokens per clip | prompt tokens of the answer turn |")
    print("|---|---|---|---|---|")
    for family, clip_as, wall, clip, prompt in bench_clip_as(backends, rows, args):
        print(f"| tiny {family} | {clip_as} | {wall:.2f} | {clip:.0f} | {prompt:.0f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 videos of 120 s")
    parser.add_argument("--videos", type=int, help="questions (default: 3; --backend vllm: 8)")
    parser.add_argument("--seconds", type=float, help="video length (default: 300; --backend vllm: 120)")
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=180)
    parser.add_argument("--fps", type=int, default=25, help="source frame rate (libx264 keyframe every 250 frames)")
    parser.add_argument("--clue-seconds", type=float, default=10.0)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-visual-tokens", type=int, default=8192, help="one-stage L_v (default: the paper's 8192)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--backend",
        choices=("transformers", "vllm"),
        default="transformers",
        help="vllm: round by round vs continuous on vLLM's CPU engine (section 5) instead of the transformers tables",
    )
    parser.add_argument("--long-words", type=int, default=120, help="--backend vllm: words of a long think")
    parser.add_argument("--short-words", type=int, default=4, help="--backend vllm: words of a short think")
    parser.add_argument("--clip-as-only", action="store_true", help="only the clip_as table (images vs video)")
    parser.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "zoomzero-bench"))
    real = parser.add_argument_group("tool vs no tool on a real checkpoint (instead of the scripted tables)")
    real.add_argument("--model", help="a VideoZoomer checkpoint (folder or hub id)")
    real.add_argument("--data", help="its benchmark rows (zoomzero data convert output)")
    real.add_argument("--limit", type=int, help="the first N rows only")
    real.add_argument("--device", help="cpu, cuda … (default: cuda when available)")
    real.add_argument("--batch-size", type=int, default=1, help="questions per generate call (1)")
    args = parser.parse_args(argv)
    if args.model or args.data:
        if not (args.model and args.data):
            parser.error("--model and --data go together")
        try:
            return real_comparison(args)
        except ZoomzeroError as e:  # a model or data file the user must fix: one line
            print(one_line("bench_agent", e), file=sys.stderr)
            return EXIT_USER
    if args.quick:
        args.videos, args.seconds = 2, 120.0
    vllm = args.backend == "vllm"
    args.videos = args.videos or (8 if vllm else 3)
    args.seconds = args.seconds or (120.0 if vllm else 300.0)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)

    from zoomzero_plugin.inference.hf_backend import TransformersBackend
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen

    model_dir = work / ("tiny-qwen-vllm" if vllm else "tiny-qwen")
    if not (model_dir / "config.json").exists():
        build_tiny_qwen(model_dir, for_vllm=vllm)
    rows = read_rows(
        long_benchmark(work, args.videos, args.seconds, args.width, args.height, args.fps, args.clue_seconds)
    )
    if vllm:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine in this process, as in EasyR1
        print_schedules(model_dir, rows, args)
        return 0
    if args.clip_as_only:
        clip_as_table(work, rows, args)
        return 0
    backend = TransformersBackend(str(model_dir), device="cpu", batch_size=1)
    print(
        f"data: {len(rows)} synthetic videos of {args.seconds:g} s, {args.width}x{args.height} @ {args.fps} fps; "
        f"backend: transformers, CPU, tiny random Qwen2.5-VL, batch 1, torch threads {os.environ['OMP_NUM_THREADS']}"
    )
    print(
        f"one-stage: L_v={args.max_visual_tokens}, 1 fps, ≤256 frames; agent: 64-frame overview at 0.5 fps "
        f"(≤100,352 px), one call of ≤16 frames, then the answer; no tool: ≤120 frames"
        f" at 0.2 fps (12,544..100,352 px) as one "
        f"video, one reply; responses ≤{args.max_new_tokens} tokens\n"
    )
    table = bench_agent_vs_one_stage(backend, rows, args)
    base = table[0][1]
    print("| mode | wall s | × one-stage | frame decode s | frames/q | video tokens/q |")
    print("|---|---|---|---|---|---|")
    for label, wall, decode, frames, tokens in table:
        print(
            f"| {label} | {wall:.2f} | {wall / base:.2f}× | {decode:.2f} | {frames:.0f} | "
            f"{'–' if tokens is None else f'{tokens:.0f}'} |"
        )

    clip_as_table(work, rows, args)
    lengths = [60.0, 300.0] if args.quick else [60.0, 300.0, 1200.0]
    decode = bench_decode(work, lengths, [1, 4, 8, 16], args)
    print(
        f"\nPer-clip decode (FrameReader: decord get_batch + the authors' resize; median of 5), "
        f"{args.width}x{args.height} @ {args.fps} fps, clip over 4 s mid-video"
    )
    print("| video s | frames | ms per clip | ms per frame | ms to open the video |")
    print("|---|---|---|---|---|")
    for seconds, n, ms, open_ms in decode:
        print(f"| {seconds:g} | {n} | {ms:.1f} | {ms / n:.1f} | {open_ms:.1f} |")

    print("\nParser throughput on ~1 MB inputs (median of 3)")
    print("| input | function | MB | ms | MB/s |")
    print("|---|---|---|---|---|")
    for name, fn, size, ms, rate in bench_parsers():
        print(f"| {name} | {fn} | {size:.2f} | {ms:.1f} | {rate:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
