"""``zoomzero verl train --cpu`` end to end: the shipped verl recipes run whole steps of verl's own loop on a CPU.

Real, all of it: the ``zoomzero`` console script, verl's ``python -m verl.trainer.main_ppo`` with its v1 trainer and
TransferQueue, its FSDP2 engine over gloo, its vLLM async server on vLLM's CPU build (weight sync included), its agent
loop and reward loop workers, checkpoints and resume; ``yamls/verl/zoomzero.yaml`` and ``yamls/verl/videozoomer.yaml``
as shipped, with overrides for a tiny model. The model is the tiny random Qwen2.5-VL after a few seconds of format
teaching (:mod:`zoomzero_plugin.synthetic.warm_start`, random letters, spans and called segments), so rewards differ
within a group and updates are real. What the checks read: verl's own logged metrics (its file logger, through
``--metrics-file``) and this package's (``reward/*``, ``zoom/*``, ``agent/*``, the gap by media), and the checkpoints.

Three launches share the work (CI time): Zoom-Zero with TokenAdv for 2 steps, a checkpoint after each; the same command
resumed from the step-1 checkpoint, which runs step 2 again and must log the same step-2 record (the loops seed each
trajectory's sampling by step, row and sample); VideoZoomer with clips as videos and TokenAdv over turns for 2 steps.

The weight sync and the positions: with fp32 on both sides, vLLM's log-prob of a sampled token and the actor's agree to
float noise (~1e-5) when vLLM has the weights the actor trained, both place every token alike and both score it over
the vocabulary vLLM samples from (measured 2026-11-28: at most 7.9e-6); a clip timed at 2 fps in training but at its
own rate in vLLM, or stale weights, give gaps of 1e-2 and more, and the actor's vision placeholders (the seam
fsdp.prepare_model_outputs) 1.3e-4 on step 1 and 1.8e-3 on step 2. The gap is logged per
media kind: the coarse pass's videos, images (the agent's overview frames), images with clips as videos.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import one_launch_at_a_time

GAP = 1e-4  # max |vLLM log-prob - actor log-prob| of a sampled token when weights, positions and vocabulary agree
REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "yamls" / "verl"
ROWS = 8
PIXELS = dict(min_pixels=3136, max_pixels=12544)  # the coarse pass's frames: 4..16 tokens
TINY = [  # what makes a recipe fit the tiny model and a CPU; everything else is the recipe's
    "trainer.n_gpus_per_node=1",
    "trainer.nnodes=1",
    "trainer.logger=[console]",
    "trainer.test_freq=-1",
    "data.train_batch_size=2",
    "data.shuffle=false",
    "data.max_prompt_length=2048",
    "data.filter_overlong_prompts=false",
    "actor_rollout_ref.actor.ppo_mini_batch_size=2",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.actor.use_dynamic_bsz=false",
    "actor_rollout_ref.actor.optim.lr=2e-4",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
    "actor_rollout_ref.rollout.n=4",
    "actor_rollout_ref.rollout.gpu_memory_utilization=0.5",
    "actor_rollout_ref.rollout.agent.num_workers=1",
    "reward.num_workers=1",
]
ZOOM = "zoomzero.zoom."
ZOOM_BUDGET = dict(max_visual_tokens=256, fps=2.0, min_frame_pixels=3136, max_frame_pixels=50176)
ZOOMZERO = TINY + [
    "data.max_response_length=160",
    "actor_rollout_ref.rollout.max_num_batched_tokens=8192",
    *(f"{ZOOM}{k}={v}" for k, v in ZOOM_BUDGET.items()),
    f"{ZOOM}prompt=concise",
]
AGENT = "zoomzero.agent."
AGENT_PIXELS = dict(max_frame_pixels=12544, min_frame_pixels=3136)
VIDEOZOOMER = TINY + [
    "data.max_response_length=1536",
    "actor_rollout_ref.rollout.max_num_batched_tokens=16384",
    "algorithm.adv_estimator=tokenadv",
    "+zoomzero.tokenadv.over_turns=true",
    f"{AGENT}clip_as=video",
    f"{AGENT}max_new_tokens=64",
    f"{AGENT}max_response_tokens=1536",
    f"{AGENT}max_images=64",
    *(f"{AGENT}{k}={v}" for k, v in AGENT_PIXELS.items()),
]
AGENT_WARM_START = (
    """
import sys
from zoomzero_plugin.agent import AgentBudget
from zoomzero_plugin.rows import read_rows
from zoomzero_plugin.synthetic.warm_start import warm_start
base, out, rows = sys.argv[1:4]
warm_start(base, out, read_rows(rows), "agent", steps=150, batch_size=8, budget=AgentBudget(**%r))
"""
    % AGENT_PIXELS
)


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZOOMZERO_VERL", "VERL_", "RAY_"))}
    env.update(OMP_NUM_THREADS="1", FORCE_QWENVL_VIDEO_READER="decord", VLLM_CPU_KVCACHE_SPACE="1", **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return env


def run_cli(*args: str, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    """``zoomzero ARGS`` of this environment, output captured; fails the test on exit != 0."""
    script = Path(sys.executable).parent / "zoomzero"
    with one_launch_at_a_time(f"zoomzero {' '.join(args[:2])}"):
        done = subprocess.run(
            [str(script), *args], cwd=cwd, env=environment(), capture_output=True, text=True, timeout=timeout
        )
    assert done.returncode == 0, (
        f"zoomzero {' '.join(args[:3])} exited {done.returncode}:\n{done.stdout[-6000:]}\n" + (done.stderr[-6000:])
    )
    return done


def train(recipe: str, model: Path, rows: Path, run: Path, overrides: list[str]) -> dict[int, dict]:
    """``zoomzero verl train yamls/verl/RECIPE --cpu``; returns the metrics verl logged per step."""
    metrics = run / "metrics.jsonl"
    metrics.unlink(missing_ok=True)
    done = run_cli(
        "verl",
        "train",
        str(RECIPES / recipe),
        "--cpu",
        "--metrics-file",
        str(metrics),
        f"data.train_files={rows}",
        f"data.val_files={rows}",
        f"actor_rollout_ref.model.path={model}",
        f"trainer.default_local_dir={run / 'checkpoints'}",
        *overrides,
        cwd=run,
    )
    (run / "train.log").write_text(done.stdout + done.stderr)
    steps: dict[int, dict] = {}
    for line in metrics.read_text().splitlines():
        record = json.loads(line)
        steps.setdefault(int(record["step"]), {}).update(record["data"])
    return steps


@pytest.fixture(scope="module")
def workspace(verl_model_dir, tmp_path_factory):
    """Synthetic videos and rows (verl's layout); the agent's warm start started in the background."""
    from zoomzero_plugin.hosts.verl.rows import verl_rows, video_element
    from zoomzero_plugin.rows import read_rows, write_rows
    from zoomzero_plugin.synthetic.benchmark import make_benchmark

    root = tmp_path_factory.mktemp("verl-train")
    rows = make_benchmark(root / "bench", n_videos=ROWS, seed=3)
    element = video_element("", 1.0, PIXELS["min_pixels"], PIXELS["max_pixels"], None)
    element.pop("video")
    write_rows(root / "rows.parquet", verl_rows(read_rows(rows), element))
    log = open(root / "agent-warm-start.log", "w")
    agent_model = root / "model-agent"
    teaching = subprocess.Popen(
        [sys.executable, "-c", AGENT_WARM_START, str(verl_model_dir), str(agent_model), str(rows)],
        env=environment(),
        stdout=log,
        stderr=log,
    )
    yield {
        "root": root,
        "rows": rows,
        "verl_rows": root / "rows.parquet",
        "base": verl_model_dir,
        "agent": (teaching, agent_model),
    }
    teaching.kill()
    teaching.wait()
    log.close()


@pytest.fixture(scope="module")
def zoomzero_run(workspace):
    """yamls/verl/zoomzero.yaml (tokenadv, the zoom pass, the zoomzero reward manager) on the model taught the
    template: 2 steps, a checkpoint after each."""
    from zoomzero_plugin.gvqa.zoom import ZoomBudget
    from zoomzero_plugin.hosts.verl.rows import verl_rows, video_element
    from zoomzero_plugin.rows import read_rows, write_rows
    from zoomzero_plugin.synthetic.warm_start import VideoInput, short_prompts, warm_start

    root = workspace["root"]
    short = short_prompts(read_rows(workspace["rows"]))
    element = video_element("", 1.0, PIXELS["min_pixels"], PIXELS["max_pixels"], None)
    element.pop("video")
    rows = root / "grounded.parquet"
    write_rows(rows, verl_rows(short, element))
    shown = VideoInput(fps=1.0, zoom=ZoomBudget(**ZOOM_BUDGET), **PIXELS)
    model = warm_start(
        workspace["base"], root / "model-grounded", short, "grounded", steps=120, batch_size=16, shown=shown
    )
    run = root / "zoomzero"
    run.mkdir()
    metrics = train(
        "zoomzero.yaml",
        model,
        rows,
        run,
        ZOOMZERO
        + [
            "trainer.total_training_steps=2",
            "trainer.save_freq=1",
            "actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]",  # the HF export too
        ],
    )
    return dict(run=run, rows=rows, model=model, metrics=metrics)


def weights_in(folder: Path) -> dict:
    """The weights of an HF model folder, by the names its safetensors files hold (as transformers 5 writes them)."""
    from safetensors.torch import load_file

    files = sorted(folder.glob("*.safetensors"))
    assert files, f"no HF weights in {folder}"
    out = {}
    for path in files:
        out.update(load_file(str(path)))
    return out


def actor_weights(step_dir: Path) -> dict:
    """The actor's weights in a verl checkpoint (its HF export of the step's FSDP2 shards)."""
    return weights_in(step_dir / "actor" / "huggingface")


def test_zoomzero_recipe_trains_whole_steps(zoomzero_run):
    metrics = zoomzero_run["metrics"]
    assert sorted(metrics) == [1, 2]
    for step in (1, 2):
        m = metrics[step]
        for key in ("timing_s/gen", "timing_s/old_log_prob", "timing_s/ref", "timing_s/update_actor", "actor/pg_loss"):
            assert key in m, key  # verl's own, each stage of its loop
        for key in (
            "reward/format",
            "reward/iou",
            "reward/accuracy",
            "reward/zoom",
            "zoom/frames",
            "zoom/span_seconds",
        ):
            assert key in m, key  # this package's: every reward component, the zoom pass
        assert "tokenadv/grounding_token_share" in m
        assert m["zoomzero/logprob_gap_max/video"] < GAP, f"step {step}: vLLM and the actor disagree on video rows"
    assert metrics[1]["actor/grad_norm"] > 0, "rewards differ within a group: the update is real"
    assert metrics[2]["actor/kl_loss"] > 1e-8, "the actor moved away from the reference in step 1"


def test_each_update_changes_the_actor_and_is_checkpointed(zoomzero_run):
    import torch

    run = zoomzero_run["run"]
    state = {step: actor_weights(run / "checkpoints" / f"global_step_{step}") for step in (1, 2)}
    start = weights_in(zoomzero_run["model"])  # the starting model's files: the names verl's export writes too
    assert set(start) == set(state[1]) == set(state[2]), "the checkpoint names other weights than the model"
    for before, after in ((None, 1), (1, 2)):
        old = start if before is None else state[before]
        moved = [k for k in state[after] if not torch.equal(old[k], state[after][k])]
        # the language model's decoder layers ("model.layers.N…" as transformers 5 writes a checkpoint), not only
        # the vision tower's blocks ("visual.blocks.N…")
        text = [k for k in moved if k.startswith(("model.layers.", "model.language_model.layers."))]
        assert text, f"update_actor of step {after} changed no weight of the language model"


def test_a_second_launch_resumes_from_the_step_1_checkpoint(zoomzero_run):
    """The same command, resuming from step 1's checkpoint: verl runs step 2 only, and runs it as the first launch did
    (step 1's weights loaded and synced to vLLM, the data loader where it was, each trajectory's sampling seeded by
    step, row and sample). Starting weights, a data loader started over or stale weights in vLLM each change it."""
    import pytest as _pytest

    run, rows, model = zoomzero_run["run"], zoomzero_run["rows"], zoomzero_run["model"]
    first = zoomzero_run["metrics"]
    again = run / "resumed"
    again.mkdir()
    resumed = train(
        "zoomzero.yaml",
        model,
        rows,
        again,
        ZOOMZERO
        + [
            "trainer.total_training_steps=2",
            "trainer.save_freq=-1",
            "trainer.resume_mode=resume_path",
            f"trainer.resume_from_path={run / 'checkpoints' / 'global_step_1'}",
        ],
    )
    assert sorted(resumed) == [2]
    assert resumed[2]["zoomzero/logprob_gap_max/video"] < GAP, "vLLM did not get the loaded weights"
    same = ("reward/overall", "reward/format", "reward/iou", "response_length/mean", "actor/pg_loss", "actor/kl_loss")
    assert {k: resumed[2][k] for k in same} == _pytest.approx({k: first[2][k] for k in same}, rel=1e-4, abs=1e-7)


@pytest.fixture(scope="module")
def videozoomer_run(workspace):
    """yamls/verl/videozoomer.yaml (the <video_zoom> loop, the videozoomer reward manager) with clips as videos and
    TokenAdv over turns, on the model taught the agent's two turns (a call on one of a few segments, then a letter)."""
    teaching, model = workspace["agent"]
    assert teaching.wait(timeout=1800) == 0, (workspace["root"] / "agent-warm-start.log").read_text()[-3000:]
    run = workspace["root"] / "videozoomer"
    run.mkdir()
    metrics = train(
        "videozoomer.yaml", model, workspace["verl_rows"], run, VIDEOZOOMER + ["trainer.total_training_steps=2"]
    )
    return dict(run=run, metrics=metrics)


def test_videozoomer_recipe_trains_whole_steps_with_clips_as_videos(videozoomer_run):
    metrics = videozoomer_run["metrics"]
    assert sorted(metrics) == [1, 2]
    for step in (1, 2):
        m = metrics[step]
        for key in ("reward/accuracy", "reward/format", "reward/tool", "agent/calls", "agent/turns"):
            assert key in m, key
        assert "tokenadv/grounding_token_share" in m
    calls = [metrics[s]["agent/calls"] for s in (1, 2)]
    assert max(calls) > 0, "the taught model calls <video_zoom>: the clips were shown"
    gaps = {k: max(metrics[s].get(k, 0.0) for s in (1, 2)) for k in metrics[1] if k.startswith("zoomzero/logprob_gap")}
    assert "zoomzero/logprob_gap_max/images+video" in gaps, "no trajectory held a clip as a video"
    assert all(gap < GAP for gap in gaps.values()), gaps  # images, and clips as videos at their own rate
