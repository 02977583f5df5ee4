"""``zoomzero demo --train``: a short GRPO run of a shipped recipe on a tiny warm-started model, on this machine's CPU.

What it runs, in order (nothing is downloaded):

1. a tiny random Qwen-VL that vLLM's CPU engine serves (:func:`~..synthetic.tiny_qwen.build_tiny_qwen`) and 8
   synthetic videos with their rows (:func:`~..synthetic.benchmark.make_benchmark`);
2. a warm start (:mod:`..synthetic.warm_start`): seconds of supervised steps that teach the model the response format
   with random letters and spans, so rewards differ within a group and GRPO has something to learn from;
3. ``easyr1 train yamls/zoomzero.yaml --cpu`` (``videozoomer.yaml`` with ``--agent``; the ``_qwen3vl`` recipes with
   ``--model qwen3-vl``) with the overrides that fit the tiny model (:func:`tiny_overrides`): EasyR1's own loop,
   FSDP over gloo, vLLM's CPU engine, the plugins, a checkpoint after the last step. One line per step: rewards,
   loss, the sampler gap (vLLM's log-probs against the actor's: ~1e-5 when the weights reached vLLM), step time;
4. ``easyr1 merge`` of the last checkpoint and ``zoomzero eval`` of the merged model on the rows;
5. where each file is, and the command that resumes the run from its checkpoint.

It needs the vLLM environment (``bash scripts/install-cpu.sh --vllm``) and refuses in one line without it; Qwen3-VL
needs EasyR1 main (``bash scripts/install-cpu.sh --easyr1-main``).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..agent import AgentBudget
from ..cpu_compat import EASYR1_MAIN_INSTALL, VLLM_ENV_INSTALL
from ..errors import DependencyError, ZoomzeroError
from ..gvqa.zoom import ZoomBudget
from ..rows import read_rows
from ..shipped import find_recipe
from ..synthetic.benchmark import make_benchmark
from ..synthetic.tiny_qwen import build_tiny_qwen
from ..synthetic.warm_start import VideoInput, short_prompts, warm_start
from ..vision import load_geometry
from .cli import main as zoomzero

ROWS, BATCH, VAL_ROWS = 8, 2, 2  # training rows, prompts per step, validation rows (the first ones)
RECIPES = {("qwen2_5_vl", False): "zoomzero", ("qwen3_vl", False): "zoomzero_qwen3vl"}
RECIPES.update({("qwen2_5_vl", True): "videozoomer", ("qwen3_vl", True): "videozoomer_qwen3vl"})
ZOOM, AGENT = "worker.reward.reward_function_kwargs.zoom.", "worker.reward.reward_function_kwargs.agent."
TINY = (  # what makes a recipe fit the tiny model on a CPU; everything else is the recipe's
    "trainer.n_gpus_per_node=1",
    "trainer.nnodes=1",
    "trainer.logger=[console]",
    f"data.rollout_batch_size={BATCH}",
    "data.val_batch_size=2",
    "data.shuffle=false",
    "data.max_prompt_length=2048",
    "data.filter_overlong_prompts=false",
    "worker.rollout.n=4",  # 4 responses per prompt: with 2, both groups of a step tie now and then (no update)
    "worker.actor.global_batch_size=2",
    "worker.actor.micro_batch_size_per_device_for_update=2",
    "worker.actor.micro_batch_size_per_device_for_experience=4",
    "worker.actor.optim.lr=2e-4",
    "worker.reward.num_cpus=0",
)
ZOOMZERO = (
    "data.max_response_length=160",
    "worker.rollout.max_num_batched_tokens=8192",
    "data.video_fps=1.0",
    f"{ZOOM}prompt=concise",
)
VIDEOZOOMER = (
    "worker.actor.micro_batch_size_per_device_for_update=1",  # multi-turn sequences of ~1,500 tokens: one at a time
    "worker.actor.micro_batch_size_per_device_for_experience=2",
    "data.max_response_length=1536",
    "data.mini_rollout_batch_size=null",
    "algorithm.online_filtering=false",
    "worker.rollout.limit_images=64",
    "worker.rollout.max_num_batched_tokens=16384",
    f"{AGENT}max_new_tokens=64",
    f"{AGENT}max_response_tokens=1536",
    f"{AGENT}max_images=64",
    f"{AGENT}sampling_logprobs=true",
)


class TinyRun:
    """The pixel budgets of a tiny run, in tokens of the model's own grid (28 px a side for Qwen2.5-VL, 32 for
    Qwen3-VL): frames of 4 to 16 tokens for the coarse pass and the agent, a zoom pass of 256 tokens of 4 to 64."""

    def __init__(self, factor: int):
        self.factor = factor

    def pixels(self, tokens: int) -> int:
        return tokens * self.factor**2

    def zoom_budget(self) -> dict[str, Any]:
        return dict(max_visual_tokens=256, fps=2.0, min_frame_pixels=self.pixels(4), max_frame_pixels=self.pixels(64))

    def agent_pixels(self) -> dict[str, int]:
        return dict(max_frame_pixels=self.pixels(16), min_frame_pixels=self.pixels(4))

    def data_pixels(self) -> list[str]:
        return [f"data.min_pixels={self.pixels(4)}", f"data.max_pixels={self.pixels(16)}"]


def tiny_overrides(factor: int, agent: bool, clip_as: str = "images") -> list[str]:
    """EasyR1 overrides that fit the shipped Zoom-Zero (``agent``: VideoZoomer) recipe to a tiny model whose tokens
    are ``factor`` pixels a side, on a CPU (``clip_as``: the agent's ``agent.clip_as``)."""
    run = TinyRun(factor)
    if agent:
        pixels = [f"{AGENT}{k}={v}" for k, v in run.agent_pixels().items()]
        return [*TINY, *run.data_pixels(), *VIDEOZOOMER, *pixels, f"{AGENT}clip_as={clip_as}"]
    return [*TINY, *run.data_pixels(), *ZOOMZERO, *(f"{ZOOM}{k}={v}" for k, v in run.zoom_budget().items())]


def check_can_train(family: str) -> str:
    """The ``easyr1`` launcher of this environment, after checking that it can train ``family`` here: vLLM and EasyR1
    installed, and EasyR1 main for Qwen3-VL. Raises :class:`DependencyError` (one line) otherwise, before any work."""
    launcher = Path(sys.executable).parent / "easyr1"
    if importlib.util.find_spec("vllm") is None or importlib.util.find_spec("verl") is None:
        missing = "vLLM" if importlib.util.find_spec("vllm") is None else "EasyR1"
        raise DependencyError(
            f"--train runs EasyR1 on vLLM's CPU engine, and {missing} is not installed here: "
            f"{VLLM_ENV_INSTALL}; `zoomzero demo` (no --train) runs anywhere"
        )
    if not launcher.exists():
        found = shutil.which("easyr1")
        if found is None:
            raise DependencyError(f"--train needs the easyr1 launcher of this environment: {VLLM_ENV_INSTALL}")
        launcher = Path(found)
    if family == "qwen3_vl":
        from verl.models.monkey_patch import SUPPORTED_MODEL_TYPE

        if "qwen3_vl" not in SUPPORTED_MODEL_TYPE:
            import verl

            raise DependencyError(
                f"--model qwen3-vl trains on EasyR1 main, and the installed EasyR1 is {verl.__version__}: "
                f"{EASYR1_MAIN_INSTALL}"
            )
    return str(launcher)


def run_train_demo(workdir: Path, family: str, agent: bool, steps: int, seed: int = 0, clip_as: str = "images") -> int:
    """Everything of the module docstring, in ``workdir``; returns the exit status (0: trained, merged, evaluated)."""
    launcher = check_can_train(family)
    start = time.perf_counter()
    workdir = workdir.resolve()  # the printed commands work from any folder
    workdir.mkdir(parents=True, exist_ok=True)
    base = build_tiny_qwen(workdir / "tiny-model", seed=seed, for_vllm=True, family=family)
    run = TinyRun(load_geometry(str(base)).factor)
    rows = read_rows(make_benchmark(workdir / "data", n_videos=ROWS, seed=seed))
    if not agent:
        rows = short_prompts(rows)  # what a warm-started tiny model reads fastest (warm_start.short_prompts)
    train_rows, val_rows = workdir / "data" / "train.jsonl", workdir / "data" / "val.jsonl"
    train_rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
    val_rows.write_text("".join(json.dumps(r) + "\n" for r in rows[:VAL_ROWS]))
    print(f"Tiny {family} model and {ROWS} synthetic video questions in {workdir} ({_since(start)})")
    model = _warm_start(base, workdir / "warm-start", rows, run, agent, clip_as, seed)
    print(f"Warm start: the tiny model taught the response format on random letters and spans ({_since(start)})")
    recipe = find_recipe(RECIPES[family, agent])
    checkpoints, metrics = workdir / "checkpoints", workdir / "metrics.jsonl"
    command = [
        launcher,
        "train",
        str(recipe.path),
        "--cpu",
        "--metrics-file",
        str(metrics),
        f"data.train_files={train_rows}",
        f"data.val_files={val_rows}",
        f"worker.actor.model.model_path={model}",
        f"trainer.save_checkpoint_path={checkpoints}",
        *tiny_overrides(run.factor, agent, clip_as),
        "trainer.save_freq=-1",  # EasyR1 saves after the last step anyway
        "trainer.val_freq=-1",  # and validates after it
    ]
    log = workdir / "train.log"
    print(
        f"Training: easyr1 train yamls/{recipe.name} --cpu, {steps} steps of {BATCH} prompts x 4 responses "
        f"(starting Ray, the FSDP worker and vLLM's CPU engine takes ~1 min; EasyR1's own output: {log})"
    )
    code = _train([*command, f"trainer.max_steps={steps}"], log, metrics, steps)
    if code != 0:
        return code
    merged = workdir / "model"
    _run([launcher, "merge", str(checkpoints / f"global_step_{steps}" / "actor"), "--out", str(merged)], log)
    print(f"Merged the step-{steps} checkpoint into {merged} ({_since(start)})")
    code = _evaluate(merged, train_rows, workdir / "eval", run, agent, clip_as)
    resume = workdir / RESUME
    resume.write_text(resume_script([*command, f"trainer.max_steps={2 * steps}"], steps))
    print(f"\nDone in {_since(start)}. Files in {workdir}:")
    for name, what in FILES:
        print(f"  {name:<16} {what}")
    print(f"To train {steps} more steps from the step-{steps} checkpoint (EasyR1 finds the last one), run:")
    print(f"  bash {shlex.quote(str(resume))}")
    return code


RESUME = "resume.sh"


def resume_script(command: Sequence[str], steps: int) -> str:
    """The shell script that runs ``command`` (the demo's ``easyr1 train`` with more steps) from any folder."""
    lines = " \\\n    ".join(shlex.quote(part) for part in command)
    return (
        f"#!/usr/bin/env bash\n# The demo's easyr1 train command with trainer.max_steps={2 * steps}: EasyR1 loads the "
        f"step-{steps} checkpoint (trainer.find_last_checkpoint) and trains {steps} more steps.\n{lines}\n"
    )


FILES = (
    ("tiny-model/", "the random tiny model"),
    ("warm-start/", "the model after the warm start (the run's starting point)"),
    ("data/", "the synthetic videos and their rows (train.jsonl, val.jsonl)"),
    ("metrics.jsonl", "EasyR1's metrics, one JSON line per logged step"),
    ("train.log", "EasyR1's own output"),
    ("checkpoints/", "EasyR1's checkpoints (global_step_N/actor: FSDP shards)"),
    ("model/", "the last checkpoint merged into a Hugging Face folder (easyr1 merge)"),
    ("eval/", "zoomzero eval of the merged model: predictions, metrics.json, report.md"),
    (RESUME, "the command that resumes the run from its last checkpoint"),
)


def _since(start: float) -> str:
    return f"{time.perf_counter() - start:.0f} s"


def _warm_start(base: Path, out: Path, rows: Sequence[dict], run: TinyRun, agent: bool, clip_as: str, seed: int):
    """The warm start of :mod:`.warm_start` as the tests make it: the agent's two turns, or Zoom-Zero's template with
    the videos shown as the rollout shows them."""
    if agent:
        budget = AgentBudget(**run.agent_pixels())
        return warm_start(base, out, rows, "agent", steps=150, batch_size=8, budget=budget, clip_as=clip_as, seed=seed)
    zoom = ZoomBudget(**run.zoom_budget()).with_geometry(load_geometry(str(base)))
    shown = VideoInput(fps=1.0, min_pixels=run.pixels(4), max_pixels=run.pixels(16), zoom=zoom)
    return warm_start(  # one span in whole seconds: a 2-layer model then writes the format (docs: warm_start)
        base, out, rows, "grounded", steps=120, batch_size=16, shown=shown, seed=seed, whole_seconds=True
    )


class TrainFailed(ZoomzeroError):
    """A launched ``easyr1`` command stopped; the message names its log."""


def _run(command: Sequence[str], log: Path) -> None:
    with open(log, "a") as out:
        done = subprocess.run(list(command), stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise TrainFailed(f"{' '.join(command[1:3])} exited {done.returncode}: {_tail(log)}")


def _tail(log: Path) -> str:
    """The log's last error line (a Python exception's ``SomeError: …``), else its last line, and where the log is."""
    text = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in log.read_text(errors="replace").splitlines()]
    errors = [line for line in text if re.search(r"\b\w*(Error|Exception): ", line)]
    shown = (errors or [line for line in text if line])[-1:]
    return f"{shown[0][:300]} (all of it in {log})" if shown else f"see {log}"


def _train(command: Sequence[str], log: Path, metrics: Path, steps: int) -> int:
    """Run ``easyr1 train`` with its output in ``log``, printing a line for each step EasyR1 logs to ``metrics``."""
    metrics.unlink(missing_ok=True)
    shown: set[int] = set()
    with open(log, "w") as out:
        process = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT)
        while True:
            finished = process.poll() is not None
            for step, record in sorted(_steps(metrics).items()):
                if step not in shown and "actor/pg_loss" in record:
                    print(progress_line(step, steps, record), flush=True)
                    shown.add(step)
            if finished:
                break
            time.sleep(1.0)
    if process.returncode != 0:
        raise TrainFailed(f"easyr1 train exited {process.returncode}: {_tail(log)}")
    return 0


def _steps(metrics: Path) -> dict[int, dict[str, Any]]:
    steps: dict[int, dict[str, Any]] = {}
    if metrics.exists():
        for line in metrics.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                steps.setdefault(int(record.pop("step")), {}).update(record)
    return steps


def progress_line(step: int, steps: int, m: dict[str, Any]) -> str:
    """``step 2/4  reward 1.50 (format 1.00, iou 0.12, …)  loss -0.0123  sampler gap 3.1e-05  9.8 s``: the mean
    reward and its components, the policy loss, ``rollout/logprob_gap_max`` and the step's wall time."""
    parts = [f"{k.split('/', 1)[1]} {v:.2f}" for k, v in m.items() if k.startswith("reward/") and k != "reward/overall"]
    reward = m.get("reward/overall", m.get("critic/score/mean", float("nan")))
    gap = m.get("rollout/logprob_gap_max")
    gap_text = f"{gap:.1e}" if gap is not None else "-"
    return (
        f"step {step}/{steps}  reward {reward:.2f} ({', '.join(parts)})  loss {m['actor/pg_loss']:+.4f}  "
        f"sampler gap {gap_text}  {m.get('timing_s/step', float('nan')):.1f} s"
    )


def _evaluate(model: Path, rows: Path, out: Path, run: TinyRun, agent: bool, clip_as: str) -> int:
    """``zoomzero eval`` of the merged model on the training rows (coarse-to-fine; the agent's mode with --agent)."""
    common = ["eval", "--benchmark", "rows", "--model", str(model), "--data", str(rows), "--out", str(out)]
    if agent:
        budget = [f"--agent-{k.replace('_', '-')}={v}" for k, v in run.agent_pixels().items()]
        flags = [
            "--mode",
            "agent",
            "--agent-prompt",
            "train",
            "--agent-clip-as",
            clip_as,
            "--agent-max-images",
            "64",
            "--agent-max-new-tokens",
            "64",
            "--agent-max-response-tokens",
            "1536",
            *budget,
        ]
    else:
        budget = run.zoom_budget()
        flags = [
            "--mode",
            "coarse-to-fine",
            "--prompt",
            "concise",
            "--fps",
            "2.0",
            "--max-visual-tokens",
            str(budget["max_visual_tokens"]),
            "--min-frame-pixels",
            str(budget["min_frame_pixels"]),
            "--max-frame-pixels",
            str(budget["max_frame_pixels"]),
        ]
    print(f"\nEvaluating the merged model on the {ROWS} rows -> {out}")
    return zoomzero([*common, *flags, "--no-progress", "--restart"])
