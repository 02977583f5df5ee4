"""VideoZoomer's RL in miniature, on a CPU: does the <video_zoom> agent learn where to look? Calls per trajectory and
accuracy per step, GRPO (the authors' setting) and optionally TokenAdv over turns, several seeds each.

    .venv-vllm/bin/python benchmarks/learning_curve_videozoomer.py --out runs/lc_videozoomer   # ~1 h on 2 busy cores
    .venv-vllm/bin/python benchmarks/learning_curve_videozoomer.py --out runs/lcv --seeds 1 --steps 2  # a look

Each run is ``easyr1 train yamls/videozoomer.yaml --cpu`` — the shipped recipe, EasyR1's own loop and the multi-turn
rollout, only sizes, the learning rate and the group filter overridden for the tiny model — with ``--metrics-file``;
the run machinery, the task's data and the table's cells are ``learning_curve.py``'s (the Zoom-Zero curve). Output:
per step the reward (overall, accuracy, format), calls, turns and call errors per trajectory (mean over seeds, the
seeds' range shaded), a table of the first and last quarter of steps and of the held-out validation before and
after, and the step time as EasyR1 logs it.

The task (``synthetic.benchmark.make_grounding_task``): a 12-s video with one coloured square per third; the question
asks for the colour of the one in the middle. The agent's overview at 0.25 fps (``--overview-fps``) shows 0, 4 and
8 s, the gaps between the squares: no colour is seen before a call, and a call on the middle third ``[4, 8]`` shows
only the answer. The tiny random Qwen2.5-VL is warm-started per seed (``synthetic.warm_start``, kind ``agent``,
``tile=True, see=True``) to call one of the three thirds drawn at random and then to name the colour the clip shows:
the protocol and the perception a pretrained VLM brings, never which third to call or the answer. What RL has to
learn is to call ``[4, 8]``. The warm start is imperfect, and the README says how: a 2-layer model pairs a call's
start and end poorly (``[8, 4]``) and names a clip's colour only about half the time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import learning_curve as lc  # noqa: E402  (the sibling script: its launcher, data and table cells)

ARMS = {
    "grpo": [],  # the recipe as shipped: EasyR1's grpo
    "tokenadv": ["algorithm.adv_estimator=tokenadv", "worker.reward.reward_function_kwargs.tokenadv.over_turns=true"],
}
LABELS = {"grpo": "GRPO", "tokenadv": "TokenAdv over turns"}
KEYS = ("reward/overall", "reward/accuracy", "reward/format", "agent/calls", "agent/turns", "agent/errors")
VAL_KEYS = {
    "reward/overall": "val/reward_score",
    "reward/accuracy": "val/accuracy_reward",
    "reward/format": "val/format_reward",
    "agent/calls": "val/agent/calls",
    "agent/turns": "val/agent/turns",
    "agent/errors": "val/agent/errors",
}
AGENT_PIXELS = dict(max_frame_pixels=12544, min_frame_pixels=3136)  # 16 tokens a frame at most


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", default="runs/lc_videozoomer", help="folder for the runs, table, plot and summary")
    p.add_argument("--arms", default="grpo", help=f"comma-separated, of {', '.join(ARMS)}")
    p.add_argument("--seeds", type=int, default=3, help="seeds per arm (warm start, data order, sampling)")
    p.add_argument("--steps", type=int, default=16, help="RL steps per run")
    p.add_argument("--prompts", type=int, default=4, help="prompts per step (data.rollout_batch_size)")
    p.add_argument("--n", type=int, default=8, help="trajectories per prompt (worker.rollout.n)")
    p.add_argument("--lr", type=float, default=2e-4, help="actor learning rate (the recipe's 1e-6 moves nothing here)")
    p.add_argument("--response-tokens", type=int, default=1024, help="response tokens of a trajectory, turns and clips")
    p.add_argument("--videos", type=int, default=32, help="training videos (8 more are held out for validation)")
    p.add_argument(
        "--overview-fps",
        type=float,
        default=0.25,
        help="the agent's overview (agent.overview_fps): 0.25 shows 0, 4 and 8 s, between the squares, so only a\n"
        "call sees a colour; the recipe's 0.5 also shows each square (2, 6, 10 s) among the overview's frames",
    )
    p.add_argument("--warm-steps", type=int, default=400, help="supervised steps of the warm start (batch 8)")
    p.add_argument("--plot", help="also write the plot here (e.g. benchmarks/results/learning_curve_videozoomer.png)")
    args = p.parse_args(argv)
    args.arms = [a for a in args.arms.split(",") if a]
    unknown = [a for a in args.arms if a not in ARMS]
    if unknown:
        p.error(f"unknown arm(s) {unknown}; known: {', '.join(ARMS)}")
    return args


def prepare(out: Path, args: argparse.Namespace) -> dict:
    """The task's rows and the base model (``learning_curve.prepare``'s), one agent warm start per seed."""
    from zoomzero_plugin.agent import AgentBudget
    from zoomzero_plugin.rows import read_rows
    from zoomzero_plugin.synthetic.warm_start import warm_start

    prepared = lc.prepare(out, lc.parse_args(["--seeds", "0", "--videos", str(args.videos)]))
    models = {}
    for seed in range(args.seeds):
        models[seed] = out / "models" / f"agent-{seed}"
        if not (models[seed] / "config.json").is_file():
            started = time.time()
            rows = read_rows(prepared["paths"]["train"])
            budget = AgentBudget(overview_fps=args.overview_fps, **AGENT_PIXELS)
            base = out / "models" / "base"
            options = dict(budget=budget, tile=True, see=True)  # perception and the protocol, not where to look
            warm_start(base, models[seed], rows, "agent", steps=args.warm_steps, batch_size=8, seed=seed, **options)
            print(f"agent warm start, seed {seed}: {time.time() - started:.0f} s", flush=True)
    return {"paths": prepared["paths"], "models": models}


def overrides(args: argparse.Namespace, paths: dict, model: Path, run: Path, seed: int) -> list[str]:
    """What fits yamls/videozoomer.yaml to the tiny model and a CPU; everything else is the recipe's (agent budget:
    <= 4 calls, 5 turns, 16 frames a call; reward 0.9 accuracy + 0.1 format; KL loss 1e-3)."""
    agent = "worker.reward.reward_function_kwargs.agent."
    return [
        f"data.train_files={paths['train']}",
        f"data.val_files={paths['val']}",
        f"data.seed={seed}",
        f"data.rollout_batch_size={args.prompts}",
        "data.mini_rollout_batch_size=null",
        "data.val_batch_size=8",
        "data.max_prompt_length=2048",
        f"data.max_response_length={args.response_tokens}",
        "data.filter_overlong_prompts=false",
        "algorithm.online_filtering=false",  # a step of 4 groups would often keep none
        f"worker.actor.model.model_path={model}",
        f"worker.actor.optim.lr={args.lr}",
        f"worker.actor.global_batch_size={args.prompts}",
        "worker.actor.micro_batch_size_per_device_for_update=4",
        "worker.actor.micro_batch_size_per_device_for_experience=8",
        f"worker.rollout.n={args.n}",
        f"worker.rollout.seed={seed}",
        "worker.rollout.limit_images=64",
        "worker.rollout.max_num_batched_tokens=65536",  # no chunked prefill: vLLM 0.11 CPU fails on a seeded one
        "worker.reward.num_cpus=0",
        f"{agent}max_new_tokens=64",
        f"{agent}max_response_tokens={args.response_tokens}",
        f"{agent}max_images=64",
        f"{agent}sampling_logprobs=true",
        f"{agent}overview_fps={args.overview_fps}",
        *(f"{agent}{k}={v}" for k, v in AGENT_PIXELS.items()),
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        "trainer.logger=[console]",
        "trainer.total_epochs=1000",
        f"trainer.max_steps={args.steps}",
        f"trainer.val_freq={args.steps}",  # before training and after the last step
        "trainer.val_before_train=true",
        "trainer.save_freq=-1",
        f"trainer.save_checkpoint_path={run / 'checkpoints'}",
    ]


def summarize(results: dict[str, list[dict[int, dict]]], args: argparse.Namespace) -> dict:
    """Per arm and key: the mean over seeds per step, each seed's mean of the first and last quarter of steps, the
    validation before and after; the step-time breakdown (steps 2.., step 1 includes vLLM's warm-up)."""
    steps = list(range(1, args.steps + 1))
    out = {}
    for arm, runs in results.items():
        arm_out: dict = {"curves": {}, "early": {}, "late": {}, "val": {}, "timing": {}}
        for key in KEYS:
            arm_out["curves"][key] = [lc.mean(v) for v in lc.series(runs, key, steps)]
            arm_out["early"][key], arm_out["late"][key] = lc.quarters(runs, key, steps)
            val = VAL_KEYS.get(key)
            if val:
                arm_out["val"][key] = [[r[s][val] for s in sorted(r) if val in r[s]] for r in runs]
        arm_out["timing"] = lc.timing(runs, steps)
        out[arm] = arm_out
    return out


def table(summary: dict, args: argparse.Namespace) -> str:
    """Markdown: per arm and key, the first and last quarter of steps and their change (mean ± sd over seeds, then
    each seed), the held-out validation (greedy, 8 videos) before and after; then the step-time breakdown."""
    q = max(1, args.steps // 4)
    lines = [
        f"| arm | per trajectory | steps 1–{q} | steps {args.steps - q + 1}–{args.steps} | change | change per seed "
        "| val before | val after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arm, s in summary.items():
        for key in KEYS:
            early, late = s["early"][key], s["late"][key]
            change = [b - a for a, b in zip(early, late)]
            val = [v for v in s["val"].get(key, []) if v]
            first, last = [v[0] for v in val], [v[-1] for v in val if len(v) > 1]
            lines.append(
                f"| {LABELS[arm]} | {key} | {lc.spread(early)} | {lc.spread(late)} | {lc.spread(change)} | "
                f"{', '.join(f'{c:+.2f}' for c in change)} | {lc.spread(first) if val else '–'} | "
                f"{lc.spread(last) if val else '–'} |"
            )
    lines += ["", "| arm | " + " | ".join(f"{t} s" for t in lc.TIMINGS) + " |", "|---" * (len(lc.TIMINGS) + 1) + "|"]
    for arm, s in summary.items():
        cells = [f"{s['timing'][t]:.1f}" if t in s["timing"] else "–" for t in lc.TIMINGS]
        lines.append(f"| {LABELS[arm]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict[str, list[dict[int, dict]]], args: argparse.Namespace, path: Path) -> None:
    """One panel per key: each arm's mean over seeds per step, shaded between the seeds' min and max."""
    title = (
        f"VideoZoomer in miniature: {len(next(iter(results.values())))} seeds per arm "
        f"({args.prompts} prompts x {args.n} trajectories per step)"
    )
    lc.panels(results, list(KEYS), list(range(1, args.steps + 1)), LABELS, title, path)


def main(argv=None) -> int:
    from tqdm import tqdm

    args = parse_args(argv)
    out = Path(args.out).resolve()
    started = time.time()
    prepared = prepare(out, args)
    recipe = lc.REPO / "yamls" / "videozoomer.yaml"
    jobs = [(arm, seed) for seed in range(args.seeds) for arm in args.arms]
    results: dict[str, list[dict[int, dict]]] = {arm: [] for arm in args.arms}
    for arm, seed in tqdm(jobs, desc="runs", unit="run"):
        run = out / "runs" / f"{arm}-{seed}"
        extra = overrides(args, prepared["paths"], prepared["models"][seed], run, seed) + ARMS[arm]
        results[arm].append(lc.launch(recipe, extra, run, args.steps, f"{arm} seed {seed}"))
    summary = summarize(results, args)
    lc.write_results(out, args, table(summary, args), summary, lambda path: plot(results, args, path))
    print(f"{len(jobs)} runs in {(time.time() - started) / 60:.1f} min; table, plot and summary in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
