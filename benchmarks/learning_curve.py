"""Zoom-Zero's Table 5 ablation in miniature, on a CPU: GRPO, + the zoom reward, + TokenAdv, several seeds each.

    .venv-vllm/bin/python benchmarks/learning_curve.py --out runs/learning_curve        # ~1 h on 2 cores
    .venv-vllm/bin/python benchmarks/learning_curve.py --out runs/lc --seeds 1 --steps 4 # a look, ~10 min

Each run is ``easyr1 train yamls/table5_{grpo,zoom,tokenadv}.yaml --cpu`` — the shipped recipes, EasyR1's own loop,
only sizes overridden for the tiny model — with ``--metrics-file``; the script reads those files, prints a table
and draws the reward per step (overall and per component, mean over seeds with the seeds' range) and writes
``summary.json``. A finished run is not run again (delete its folder to redo it), so an interrupted script goes on
where it stopped; the data, the warm starts and finished runs are reused only when made with the settings asked now
(``made_with.json`` in each: else one line, before any run starts, says which folder to move aside).

The task (``synthetic.benchmark.make_grounding_task``): each 12-s video shows three coloured squares, one per third;
the question asks for the colour of the one in the middle third (the ground-truth span). The whole video shows three
candidate answers, a clip of the middle third only the right one: the zoom pass answers right exactly when the
predicted spans land in the middle third. The model is the tiny random Qwen2.5-VL (2 layers, width 64) after a
warm start (``synthetic.warm_start``, per seed) that teaches the formats with random letters and random spans of
whole seconds (``whole_seconds``), and — the perception a pretrained VLM brings — to name the colour a zoom-pass
clip of one square shows. Where to look and what the coarse pass answers are left to RL. Before any run the script
measures and prints what each warm start writes (``synthetic.grounded_probe``, kept in its folder): how many of its
coarse answers on the held-out rows, greedy and sampled at temperature 1, are in the template the format reward pays —
a warm start whose answers never are leaves RL no reward to learn from (seed 1 of the reported table: greedy
0/8, sampled 1/32; format 0 at every step of every arm). Each step: 8 prompts x 8
responses, 8 optimizer steps of one group each (the shipped recipes' ratio: 64 prompts, 8 per update). Grounding
here is a location the question names ("in the middle"), learnable from text by a 2-layer model in minutes; a real
model must find the moment in the video.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARMS = {"grpo": "table5_grpo.yaml", "zoom": "table5_zoom.yaml", "tokenadv": "table5_tokenadv.yaml"}
LABELS = {"grpo": "GRPO", "zoom": "+ zoom reward", "tokenadv": "+ TokenAdv"}
COMPONENTS = ("overall", "format", "iou", "accuracy", "zoom")
# EasyR1's timing_s/*: gen holds the coarse generation, the zoom pass and the rewards (the host scores while it builds
# the batch, so v0.3.2's own timing_s/reward is not logged); old/ref: log-probs; step: all of it
TIMINGS = ("gen", "old", "ref", "adv", "update_actor", "step")
VIDEO = dict(fps=1.0, min_pixels=3136, max_pixels=12544)  # the coarse pass: 12 frames, 4 tokens each
MAX_RESPONSE_LENGTH = 96  # tokens of a coarse-pass response (data.max_response_length)
ZOOM_BUDGET = dict(max_visual_tokens=256, fps=2.0, min_frame_pixels=3136, max_frame_pixels=50176)  # the zoom pass


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", default="runs/learning_curve", help="folder for the runs, table, plot and summary")
    p.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    p.add_argument("--seeds", type=int, default=3, help="seeds per arm (warm start, data order, sampling)")
    p.add_argument("--steps", type=int, default=30, help="RL steps per run")
    p.add_argument("--prompts", type=int, default=8, help="prompts per step (data.rollout_batch_size)")
    p.add_argument("--n", type=int, default=8, help="responses per prompt (worker.rollout.n)")
    p.add_argument(
        "--update-prompts",
        type=int,
        default=1,
        help="prompts per optimizer step (worker.actor.global_batch_size): --prompts / this many updates per step\n"
        "(the shipped recipes: 64 / 8 = 8 updates per step; here 8 / 1 = 8)",
    )
    p.add_argument(
        "--lr",
        type=float,
        default=1e-4,
        help="actor learning rate (with one update per step, 1e-3 broke the tiny model)",
    )
    p.add_argument("--videos", type=int, default=32, help="training videos (8 more are held out for validation)")
    p.add_argument("--warm-steps", type=int, default=600, help="supervised steps of the warm start (batches of 16)")
    p.add_argument("--val-freq", type=int, default=10, help="steps between validations (and one before training)")
    p.add_argument("--plot", help="also write the plot here (e.g. benchmarks/results/learning_curve.png)")
    p.add_argument(
        "--only-seeds",
        help="run only these seeds (comma-separated), no table: to share the runs among "
        "processes or machines writing to one --out; a last call without it writes the table",
    )
    args = p.parse_args(argv)
    args.arms = [a for a in args.arms.split(",") if a]
    args.only_seeds = [int(x) for x in args.only_seeds.split(",")] if args.only_seeds else None
    unknown = [a for a in args.arms if a not in ARMS]
    if unknown:
        p.error(f"unknown arm(s) {unknown}; known: {', '.join(ARMS)}")
    return args


MADE_WITH = "made_with.json"  # in a folder the scripts make once and reuse: the settings it was made with


def made_before(folder: Path, made_with: dict, what: str) -> bool:
    """Whether ``folder`` already holds ``what``, made with ``made_with`` (then reuse it); False when it holds nothing.
    Made with other settings, before the scripts recorded them, or left unfinished: one line, before any run starts
    (reusing it would silently train another curve). ``record_made_with`` marks it finished."""
    record = folder / MADE_WITH
    if record.is_file():
        found = json.loads(record.read_text())
        if found == made_with:
            return True
        raise SystemExit(
            f"{folder}: {what} made with {found}, not {made_with}; move it aside, or give these settings another --out"
        )
    if folder.is_dir() and any(folder.iterdir()):
        raise SystemExit(
            f"{folder}: {what} unfinished or made before the scripts recorded their settings ({MADE_WITH}); "
            "move it aside, or give these settings another --out"
        )
    return False


def record_made_with(folder: Path, made_with: dict) -> None:
    """Marks ``folder`` finished, made with ``made_with`` (written last: a folder without it is not reused)."""
    (folder / MADE_WITH).write_text(json.dumps(made_with, sort_keys=True))


def prepare(out: Path, args: argparse.Namespace) -> dict:
    """The task's rows (short prompts), the base model and one warm-started model per seed (made once, reused only
    when made with the same settings)."""
    from zoomzero_plugin.gvqa.zoom import ZoomBudget
    from zoomzero_plugin.rows import read_rows, write_rows
    from zoomzero_plugin.synthetic.benchmark import make_grounding_task
    from zoomzero_plugin.synthetic.tiny_qwen import build_tiny_qwen
    from zoomzero_plugin.synthetic.warm_start import VideoInput, short_prompts, warm_start

    data = out / "data"
    paths = {name: data / f"{name}.jsonl" for name in ("train", "val")}
    task = {"videos": args.videos}
    if not made_before(data, task, "the task's rows"):
        for name, n, seed in (("train", args.videos, 100), ("val", 8, 200)):
            rows = read_rows(make_grounding_task(data / name, n_videos=n, seed=seed))
            write_rows(paths[name], short_prompts(rows))
        record_made_with(data, task)
    base = out / "models" / "base"
    if not (base / "config.json").is_file():
        build_tiny_qwen(base, for_vllm=True)
    shown = VideoInput(zoom=ZoomBudget(**ZOOM_BUDGET), **VIDEO)
    models, probes, held_out = {}, {}, read_rows(paths["val"])
    made_with = {"warm_steps": args.warm_steps, "videos": args.videos}
    for seed in range(args.seeds):
        models[seed] = out / "models" / f"warm-{seed}"
        if not made_before(models[seed], made_with, f"seed {seed}'s warm start"):
            started = time.time()
            warm_start(
                base,
                models[seed],
                read_rows(paths["train"]),
                "grounded",
                steps=args.warm_steps,
                batch_size=16,
                seed=seed,
                shown=shown,
                see=True,
                whole_seconds=True,
            )
            record_made_with(models[seed], made_with)
            print(f"warm start, seed {seed}: {time.time() - started:.0f} s", flush=True)
        probes[seed] = probe(models[seed], held_out, shown, seed)
        print(f"warm start, seed {seed}:", *probes[seed]["lines"], sep="\n  ", flush=True)
    return {"paths": paths, "models": models, "probes": probes}


def probe(model: Path, rows: list, shown, seed: int) -> dict:
    """What the warm start ``model`` writes before RL (``synthetic.grounded_probe`` on the held-out rows: coarse
    answers in the template, greedy and sampled; ~10 s), measured once and kept in ``model/probe.json``."""
    from zoomzero_plugin.synthetic.grounded_probe import probe_grounded

    found = model / "probe.json"
    if not found.is_file():
        measured = probe_grounded(model, rows, shown, MAX_RESPONSE_LENGTH, samples=4, seed=seed)
        found.write_text(json.dumps({"lines": measured.lines(), **measured.shares()}))
    return json.loads(found.read_text())


def overrides(args: argparse.Namespace, paths: dict, model: Path, run: Path, seed: int) -> list[str]:
    """What fits a Table 5 recipe to the tiny model and a CPU; everything else is the recipe's."""
    zoom = "worker.reward.reward_function_kwargs.zoom."
    return [
        f"data.train_files={paths['train']}",
        f"data.val_files={paths['val']}",
        f"data.seed={seed}",
        f"data.rollout_batch_size={args.prompts}",
        "data.val_batch_size=8",
        "data.max_prompt_length=1024",
        f"data.max_response_length={MAX_RESPONSE_LENGTH}",
        f"data.video_fps={VIDEO['fps']}",
        f"data.min_pixels={VIDEO['min_pixels']}",
        f"data.max_pixels={VIDEO['max_pixels']}",
        "data.filter_overlong_prompts=false",
        f"worker.actor.model.model_path={model}",
        f"worker.actor.optim.lr={args.lr}",
        f"worker.actor.global_batch_size={args.update_prompts}",
        "worker.actor.micro_batch_size_per_device_for_update=8",
        "worker.actor.micro_batch_size_per_device_for_experience=16",
        f"worker.rollout.n={args.n}",
        f"worker.rollout.seed={seed}",
        "worker.rollout.max_num_batched_tokens=16384",
        "worker.reward.num_cpus=0",
        *(f"{zoom}{k}={v}" for k, v in ZOOM_BUDGET.items()),
        f"{zoom}prompt=concise",
        "trainer.n_gpus_per_node=1",
        "trainer.nnodes=1",
        "trainer.logger=[console]",
        "trainer.total_epochs=1000",
        f"trainer.max_steps={args.steps}",
        f"trainer.val_freq={args.val_freq}",
        "trainer.val_before_train=true",
        "trainer.save_freq=-1",
        f"trainer.save_checkpoint_path={run / 'checkpoints'}",
    ]


def read_metrics(path: Path) -> dict[int, dict]:
    steps: dict[int, dict] = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        record = json.loads(line)
        steps.setdefault(record.pop("step"), {}).update(record)
    return steps


def train(args: argparse.Namespace, prepared: dict, arm: str, seed: int, run: Path) -> dict[int, dict]:
    """One run (skipped when its metrics already hold every step); its metrics per step."""
    extra = overrides(args, prepared["paths"], prepared["models"][seed], run, seed)
    return launch(REPO / "yamls" / ARMS[arm], extra, run, args.steps, f"{arm} seed {seed}")


def launch(recipe: Path, extra: list[str], run: Path, steps: int, name: str) -> dict[int, dict]:
    """``easyr1 train RECIPE --cpu`` with overrides ``extra`` in ``run`` (skipped when its metrics already hold all
    ``steps`` and it was made with the same recipe and overrides: else one line); its metrics per step. Exits naming
    the log when the run fails."""
    metrics = run / "metrics.jsonl"
    made_with = {"recipe": recipe.name, "overrides": extra}
    done = read_metrics(metrics)
    if steps in done and "actor/pg_loss" in done[steps]:
        record = run / MADE_WITH
        if not record.is_file() or json.loads(record.read_text()) != made_with:
            raise SystemExit(
                f"{run}: a finished run of other settings than {made_with} (or from before the scripts recorded "
                f"them in {MADE_WITH}); move it aside to run it again"
            )
        return done
    run.mkdir(parents=True, exist_ok=True)
    record_made_with(run, made_with)  # written first: whether it finished is read on its metrics
    metrics.unlink(missing_ok=True)
    shutil.rmtree(run / "checkpoints", ignore_errors=True)  # EasyR1 would resume from an unfinished run's last one
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "FORCE_QWENVL_VIDEO_READER": "decord",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    }  # the engine inside the worker: ~3 GB less than its own process
    env.pop("EASYR1_PLUGINS_CPU", None)
    command = [str(Path(sys.executable).parent / "easyr1"), "train", str(recipe), "--cpu", "--metrics-file"]
    with open(run / "train.log", "w") as log:
        code = run_tied([*command, str(metrics), *extra], cwd=run, env=env, stdout=log, stderr=subprocess.STDOUT)
    if code != 0:
        sys.exit(f"{name}: easyr1 train exited {code}; see {run / 'train.log'}")
    return read_metrics(metrics)


def run_tied(command: list[str], grace: float = 30.0, **popen: object) -> int:
    """Run ``command`` in a process group of its own, tied to this script: Ctrl-C or SIGTERM here ends the group
    (``easyr1 train`` and what it started; Ray's daemons share their driver's fate) before the interrupt goes on, so
    no run goes on computing unrecorded. On Linux the child also gets SIGTERM when this script dies of SIGKILL (its
    parent-death signal). Returns the command's exit code."""
    child = subprocess.Popen(command, start_new_session=True, preexec_fn=_die_with_parent, **popen)
    before = signal.signal(signal.SIGTERM, _interrupted)
    try:
        return child.wait()
    except BaseException:
        end_group(child, grace)
        raise
    finally:
        signal.signal(signal.SIGTERM, before)


def end_group(child: subprocess.Popen, grace: float) -> None:
    """SIGTERM to ``child``'s process group; SIGKILL to whatever of it is left ``grace`` seconds later."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    try:
        os.killpg(child.pid, signal.SIGKILL)  # the leader may have gone, members of its group not
    except ProcessLookupError:
        pass
    child.wait()


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def series(runs: list[dict[int, dict]], key: str, steps: list[int]) -> list[list[float]]:
    """Per step, the value of ``key`` in each run that logged it."""
    return [[r[s][key] for r in runs if s in r and key in r[s]] for s in steps]


def mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summarize(results: dict[str, list[dict[int, dict]]], args: argparse.Namespace) -> dict:
    """Per arm: each component's mean over seeds per step, its first and last quarter of steps per seed, and the
    step-time breakdown (mean over steps 2.. and seeds: step 1 includes vLLM's warm-up)."""
    steps = list(range(1, args.steps + 1))
    out = {}
    for arm, runs in results.items():
        arm_out: dict = {"curves": {}, "early": {}, "late": {}, "val": {}, "timing": {}}
        for c in COMPONENTS:
            per_step = series(runs, f"reward/{c}", steps)
            if not any(per_step):
                continue
            arm_out["curves"][c] = [mean(v) for v in per_step]
            arm_out["early"][c], arm_out["late"][c] = quarters(runs, f"reward/{c}", steps)
            val_key = "val/reward_score" if c == "overall" else f"val/{c}_reward"
            val_steps = sorted({s for r in runs for s in r if s <= args.steps and val_key in r[s]})
            arm_out["val"][c] = {s: [r[s][val_key] for r in runs if s in r and val_key in r[s]] for s in val_steps}
        arm_out["timing"] = timing(runs, steps)
        out[arm] = arm_out
    return out


def quarters(runs: list[dict[int, dict]], key: str, steps: list[int]) -> tuple[list[float], list[float]]:
    """Per run that logged ``key``: its mean over the first quarter of ``steps`` it logged, and over the last."""
    quarter = max(1, len(steps) // 4)
    per_seed = [v for v in ([r[s][key] for s in steps if s in r and key in r[s]] for r in runs) if v]
    return [statistics.fmean(v[:quarter]) for v in per_seed], [statistics.fmean(v[-quarter:]) for v in per_seed]


def timing(runs: list[dict[int, dict]], steps: list[int]) -> dict[str, float]:
    """EasyR1's ``timing_s/*`` of :data:`TIMINGS`, mean over ``steps`` but the first (vLLM's warm-up) and runs."""
    out = {}
    for t in TIMINGS:
        values = [r[s][f"timing_s/{t}"] for r in runs for s in steps[1:] if s in r and f"timing_s/{t}" in r[s]]
        if values:
            out[t] = statistics.fmean(values)
    return out


def spread(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"


def table(summary: dict, args: argparse.Namespace) -> str:
    """Markdown: per arm and component, the mean of the first and last quarter of steps (mean ± sd over seeds), how
    many seeds rose from the one to the other, the held-out validation before and after training; then the
    step-time breakdown."""
    q = max(1, args.steps // 4)
    lines = [
        f"| arm | reward | steps 1–{q} | steps {args.steps - q + 1}–{args.steps} | change | rose in | val before "
        "| val after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arm, s in summary.items():
        for c in s["curves"]:
            early, late = s["early"][c], s["late"][c]
            change = [b - a for a, b in zip(early, late)]
            val = s["val"].get(c, {})
            first, last = (val[min(val)], val[max(val)]) if val else ([], [])
            lines.append(
                f"| {LABELS[arm]} | {c} | {spread(early)} | {spread(late)} | {spread(change)} | "
                f"{sum(d > 0 for d in change)}/{len(change)} | {spread(first)} | {spread(last)} |"
            )
    lines += ["", "| arm | " + " | ".join(f"{t} s" for t in TIMINGS) + " |", "|---" * (len(TIMINGS) + 1) + "|"]
    for arm, s in summary.items():
        cells = [f"{s['timing'][t]:.2f}" if t in s["timing"] else "–" for t in TIMINGS]
        lines.append(f"| {LABELS[arm]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict[str, list[dict[int, dict]]], args: argparse.Namespace, path: Path) -> None:
    """One panel per reward component: each arm's mean over seeds per step, shaded between the seeds' min and max."""
    steps = list(range(1, args.steps + 1))
    shown = [c for c in COMPONENTS if any(series(runs, f"reward/{c}", steps)[0] for runs in results.values())]
    title = (
        f"Table 5 in miniature: {len(next(iter(results.values())))} seeds per arm "
        f"({args.prompts} prompts x {args.n} responses per step)"
    )
    panels(results, [f"reward/{c}" for c in shown], steps, {a: LABELS[a] for a in ARMS}, title, path)


def panels(
    results: dict[str, list[dict[int, dict]]], keys: list[str], steps: list[int], labels: dict, title: str, path: Path
) -> None:
    """One panel per metric ``key``: each arm's mean over seeds per step, shaded between the seeds' min and max; one
    colour per arm (its place in ``labels``) in every panel, an arm without the key left out of its panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.0), sharex=True)
    for ax, key in zip(axes, keys):
        for arm, runs in results.items():
            per_step = series(runs, key, steps)
            if not any(per_step):
                continue
            xs = [s for s, v in zip(steps, per_step) if v]
            color = f"C{list(labels).index(arm)}"
            ax.plot(xs, [statistics.fmean(v) for v in per_step if v], label=labels[arm], color=color)
            ax.fill_between(
                xs, [min(v) for v in per_step if v], [max(v) for v in per_step if v], alpha=0.2, color=color
            )
        ax.set_title(key)
        ax.set_xlabel("step")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_results(out: Path, args: argparse.Namespace, text: str, summary: dict, draw, steps: dict) -> None:
    """The table (printed, and ``learning_curve.md``), ``summary.json``, the plot (``draw(path)``) and the runs'
    per-step numbers ``steps`` (JSON): ``learning_curve.png`` and ``steps.json``, and ``--plot``'s path with the
    numbers next to it (``.json``), for committing together."""
    print(text)
    (out / "learning_curve.md").write_text(text + "\n")
    (out / "summary.json").write_text(json.dumps({"args": vars(args), "summary": summary}, indent=1))
    numbers = json.dumps(steps, indent=None, separators=(",", ":"), sort_keys=True) + "\n"
    for path in [out / "learning_curve.png", *([Path(args.plot)] if args.plot else [])]:
        draw(path)
        (out / "steps.json" if path.parent == out else path.with_suffix(".json")).write_text(numbers)


STEP_KEYS = ("reward/", "val/", "timing_s/", "actor/kl_loss", "actor/grad_norm", "rollout/logprob_gap_max")


def per_step(results: dict[str, list[dict[int, dict]]], seeds: list[int], keys: tuple[str, ...] = STEP_KEYS) -> dict:
    """Each run's logged numbers per step whose key starts with one of ``keys``: ``{arm: {seed: {step: {key: v}}}}``
    — what a table and a plot are computed from."""
    return {
        arm: {
            str(seed): {str(step): {k: v for k, v in m.items() if k.startswith(keys)} for step, m in sorted(r.items())}
            for seed, r in zip(seeds, runs)
        }
        for arm, runs in results.items()
    }


def main(argv=None) -> int:
    from tqdm import tqdm

    args = parse_args(argv)
    out = Path(args.out).resolve()
    started = time.time()
    prepared = prepare(out, args)
    jobs = [(arm, seed) for seed in range(args.seeds) for arm in args.arms]
    if args.only_seeds is not None:
        jobs = [(arm, seed) for arm, seed in jobs if seed in args.only_seeds]
    results: dict[str, list[dict[int, dict]]] = {arm: [] for arm in args.arms}
    for arm, seed in tqdm(jobs, desc="runs", unit="run"):
        results[arm].append(train(args, prepared, arm, seed, out / "runs" / f"{arm}-{seed}"))
    if args.only_seeds is not None:
        print(
            f"{len(jobs)} runs in {(time.time() - started) / 60:.1f} min; the table: the same command without "
            "--only-seeds"
        )
        return 0
    summary = summarize(results, args)
    steps = {"settings": {k: v for k, v in vars(args).items() if k not in ("out", "plot")}}
    steps["runs"] = per_step(results, list(range(args.seeds)))
    steps["warm_starts"] = {str(seed): probe for seed, probe in prepared["probes"].items()}
    write_results(out, args, table(summary, args), summary, lambda path: plot(results, args, path), steps)
    print(f"{len(jobs)} runs in {(time.time() - started) / 60:.1f} min; table, plot and summary in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
