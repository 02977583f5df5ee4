"""``easyr1 train --cpu`` end to end: the shipped recipes run whole GRPO steps of EasyR1's own loop on CPU processes.

Real, all of it: the ``easyr1`` console script, EasyR1's ``verl.trainer.main`` with its Runner, FSDPWorker (FSDP over
gloo), its vLLMRollout on vLLM's CPU engine, the sharding manager's weight sync, the reward actors, checkpoints and
resume; ``yamls/zoomzero.yaml`` and ``yamls/videozoomer.yaml`` as shipped, with overrides for a tiny model. The model
is the tiny random Qwen2.5-VL (head size 32, for vLLM) after a few seconds of format teaching
(:mod:`zoomzero_plugin.synthetic.warm_start`: random letters and spans), so rewards differ within a group and
updates are real. What the checks read: EasyR1's own logged metrics (``--metrics-file``), its checkpoints merged by
``easyr1 merge``, and ``zoomzero eval`` on the merged model.

Weight sync: in CPU mode EasyR1's rollout keeps vLLM's log-prob of every sampled token and the step logs how far it
is from the actor's (``rollout/logprob_gap_max``); with fp32 on both sides it is float noise (~3e-5) when vLLM has
the weights the actor trained, and about the size of the update (> 1e-2 here) when it does not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.easyr1.conftest import subprocess_env

GAP = 1e-3  # max |vLLM log-prob - actor log-prob| of a sampled token when the weights agree (fp32: ~3e-5 measured)
ROWS, BATCH = 8, 2  # rows in the train file, prompts per step (data.rollout_batch_size)

TINY = [  # what makes a recipe fit the tiny model and a CPU; everything else is the recipe's
    "trainer.n_gpus_per_node=1", "trainer.nnodes=1", "trainer.logger=[console]",
    f"data.rollout_batch_size={BATCH}", "data.val_batch_size=2", "data.shuffle=false",
    "data.max_prompt_length=2048", "data.min_pixels=3136", "data.max_pixels=12544",
    "data.filter_overlong_prompts=false", "worker.rollout.n=2", "worker.actor.global_batch_size=2",
    "worker.actor.micro_batch_size_per_device_for_update=1", "worker.actor.micro_batch_size_per_device_for_experience=2",
    "worker.actor.optim.lr=2e-4", "worker.reward.num_cpus=0",
]
ZOOMZERO = TINY + [
    "data.max_response_length=160", "worker.rollout.max_num_batched_tokens=4096",
    "worker.reward.reward_function_kwargs.zoom.max_tokens=256", "worker.reward.reward_function_kwargs.zoom.fps=2.0",
    "worker.reward.reward_function_kwargs.zoom.min_frame_pixels=3136",
    "worker.reward.reward_function_kwargs.zoom.max_frame_pixels=50176",
    "worker.reward.reward_function_kwargs.zoom.prompt=concise",
]
VIDEOZOOMER = TINY + [
    "worker.rollout.n=4", "data.max_response_length=1536", "data.mini_rollout_batch_size=null", "algorithm.online_filtering=false",
    "worker.rollout.limit_images=64", "worker.rollout.max_num_batched_tokens=16384",
    "worker.reward.reward_function_kwargs.agent.turn_tokens=64",
    "worker.reward.reward_function_kwargs.agent.total_tokens=1536",
    "worker.reward.reward_function_kwargs.agent.images=64",
    "worker.reward.reward_function_kwargs.agent.frame_max_pixels=12544",
    "worker.reward.reward_function_kwargs.agent.frame_min_pixels=3136",
    "worker.reward.reward_function_kwargs.agent.sampling_logprobs=true",
]


def run_cli(program: str, *args: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """A console script of this environment (``easyr1``, ``zoomzero``), output captured; fails the test on exit != 0."""
    script = Path(sys.executable).parent / program
    env = subprocess_env(OMP_NUM_THREADS="1", FORCE_QWENVL_VIDEO_READER="decord", VLLM_CPU_KVCACHE_SPACE="1")
    env.pop("EASYR1_PLUGINS_CPU", None)
    done = subprocess.run([str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{program} {' '.join(args[:2])} exited {done.returncode}:\n{done.stdout[-6000:]}" \
                                 f"\n{done.stderr[-6000:]}"
    return done


def train(recipe: str, model: Path, rows: Path, run: Path, overrides: list[str]) -> dict[int, dict]:
    """``easyr1 train yamls/RECIPE --cpu``; returns the metrics logged per step (several log calls of a step merged)."""
    metrics = run / "metrics.jsonl"
    metrics.unlink(missing_ok=True)
    repo = Path(__file__).resolve().parents[2]
    run_cli("easyr1", "train", str(repo / "yamls" / recipe), "--cpu", "--metrics-file", str(metrics),
            f"data.train_files={rows}", f"data.val_files={rows}", f"worker.actor.model.model_path={model}",
            f"trainer.save_checkpoint_path={run / 'checkpoints'}", *overrides, cwd=run)
    steps: dict[int, dict] = {}
    for line in metrics.read_text().splitlines():
        record = json.loads(line)
        steps.setdefault(record.pop("step"), {}).update(record)
    return steps


@pytest.fixture(scope="module")
def workspace(vllm_model_dir, tmp_path_factory):
    """Synthetic videos and rows (short prompts), and the tiny model taught each recipe's formats."""
    from zoomzero_plugin.rows import read_rows
    from zoomzero_plugin.synthetic.benchmark import make_benchmark
    from zoomzero_plugin.synthetic.warm_start import (
        format_examples,
        short_prompts,
        teach_format,
    )

    root = tmp_path_factory.mktemp("train-cli")
    rows = read_rows(make_benchmark(root / "bench", n_videos=ROWS, seed=3))
    out = {"root": root}
    for kind in ("grounded", "agent"):
        short = short_prompts(rows, kind)
        path = root / f"{kind}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in short))
        pairs = format_examples(short, kind, 256)
        out[kind] = (path, teach_format(vllm_model_dir, root / f"model-{kind}", pairs, steps=120, batch_size=16))
    return out


@pytest.fixture(scope="module")
def zoomzero_run(workspace):
    """yamls/zoomzero.yaml (tokenadv, zoom pass, zoomzero:gvqa): 2 steps, a checkpoint after each, validation at 2."""
    rows, model = workspace["grounded"]
    run = workspace["root"] / "zoomzero"
    run.mkdir()
    metrics = train("zoomzero.yaml", model, rows, run, ZOOMZERO + ["trainer.max_steps=2", "trainer.save_freq=1",
                                                                   "trainer.val_freq=2"])
    return dict(run=run, rows=rows, model=model, metrics=metrics)


def prompt_lengths(model: Path, rows: Path, recipe_overrides: list[str]) -> list[int]:
    """Each row's prompt length as EasyR1's own RLHFDataset builds it for this recipe (what it logs per step)."""
    from verl.utils.tokenizer import get_processor, get_tokenizer

    from tests.easyr1.helpers import rlhf_dataset
    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    repo = Path(__file__).resolve().parents[2]
    config = load_recipe(repo / "yamls" / "zoomzero.yaml",
                         [*recipe_overrides, f"data.train_files={rows}", f"data.val_files={rows}",
                          f"worker.actor.model.model_path={model}"]).config
    dataset = rlhf_dataset(config, get_tokenizer(str(model)), get_processor(str(model)))
    return [int(dataset[i]["attention_mask"].sum()) for i in range(len(dataset))]


def test_zoomzero_recipe_trains_whole_steps(zoomzero_run):
    metrics = zoomzero_run["metrics"]
    assert sorted(metrics) == [1, 2]
    for step in (1, 2):
        m = metrics[step]
        # EasyR1's own metrics of each stage of its loop
        for key in ("timing_s/gen", "timing_s/old", "timing_s/ref", "timing_s/update_actor", "actor/pg_loss",
                    "actor/grad_norm", "critic/score/mean", "response_length/mean"):
            assert key in m, key
        # this package's: every reward component, the zoom pass, TokenAdv's token split
        for key in ("reward/format", "reward/iou", "reward/accuracy", "reward/zoom", "zoom/coarse_frames",
                    "zoom/zoomed_share", "tokenadv/grounding_token_share"):
            assert key in m, key
        assert m["actor/lr"] == pytest.approx(2e-4), "constant from step 1 (v0.3.2 gives step 1 a learning rate of 0)"
        assert m["rollout/logprob_gap_max"] < GAP, "vLLM generated with weights other than the actor's"
    assert metrics[1]["actor/grad_norm"] > 0, "rewards differ within a group: the update is real"
    assert metrics[2]["actor/kl_loss"] > 1e-6, "the actor moved away from the reference in step 1"
    assert "val/reward_score" in metrics[2] and "val/zoom_reward" in metrics[2], "validation ran at step 2"


def test_checkpoints_merge_into_a_model_zoomzero_eval_runs(zoomzero_run):
    """``easyr1 merge`` turns each step's actor shards into a HF folder that equals them; each update changed the
    weights; ``zoomzero eval`` loads the merged model and runs both Zoom-Zero modes."""
    import torch
    from transformers import Qwen2_5_VLForConditionalGeneration

    run, rows = zoomzero_run["run"], zoomzero_run["rows"]
    merged = {}
    for step in (1, 2):
        actor = run / "checkpoints" / f"global_step_{step}" / "actor"
        out = run / f"merged-{step}"
        run_cli("easyr1", "merge", str(actor), "--out", str(out), cwd=run)
        merged[step] = Qwen2_5_VLForConditionalGeneration.from_pretrained(out).state_dict()
        shard = torch.load(actor / "model_world_size_1_rank_0.pt", map_location="cpu", weights_only=False)
        assert set(shard) == set(merged[step]) and all(torch.equal(merged[step][k], v) for k, v in shard.items())
    start = Qwen2_5_VLForConditionalGeneration.from_pretrained(zoomzero_run["model"]).state_dict()
    for before, after in ((start, merged[1]), (merged[1], merged[2])):
        moved = [k for k in before if not torch.equal(before[k], after[k])]
        assert any("language_model.layers" in k for k in moved), "update_actor changed no weight"
    for mode in ("one-stage", "coarse-to-fine"):
        out = run / f"eval-{mode}"
        run_cli("zoomzero", "eval", "--benchmark", "rows", "--mode", mode, "--model", str(run / "merged-2"),
                "--data", str(rows), "--out", str(out), "--limit", "2", "--no-progress", "--max-tokens", "256",
                "--min-frame-pixels", "3136", "--max-frame-pixels", "50176", "--prompt", "concise", cwd=run)
        assert len((out / "predictions.jsonl").read_text().splitlines()) == 2
        assert (out / "metrics.json").is_file()


def test_second_launch_resumes_at_the_next_step(zoomzero_run):
    """The same command with one more step: EasyR1 finds the last checkpoint, runs step 3 only, with the weights of
    step 2 (the actor differs from the reference from its first micro-batch on) and the data loader where it was
    (rows 5 and 6 of the file, as their prompt lengths show)."""
    run, rows, model = zoomzero_run["run"], zoomzero_run["rows"], zoomzero_run["model"]
    lengths = prompt_lengths(model, rows, ZOOMZERO)
    assert len(set(lengths)) > 2, "rows must be told apart by their prompt lengths"
    first = zoomzero_run["metrics"]
    for step in (1, 2):  # shuffle off: step k reads rows 2k-1 and 2k
        assert first[step]["prompt_length/mean"] == pytest.approx(sum(lengths[2 * step - 2: 2 * step]) / 2)
    resumed = train("zoomzero.yaml", model, rows, run, ZOOMZERO + ["trainer.max_steps=3", "trainer.save_freq=1",
                                                                   "trainer.val_freq=-1"])
    assert sorted(k for k in resumed if "actor/pg_loss" in resumed[k]) == [3]
    assert resumed[3]["prompt_length/mean"] == pytest.approx(sum(lengths[4:6]) / 2)
    assert resumed[3]["actor/kl_loss"] > 1e-6, "the resumed actor is the step-2 one, not the starting model"
    assert resumed[3]["rollout/logprob_gap_max"] < GAP, "vLLM got the loaded weights"
    assert (run / "checkpoints" / "global_step_3" / "actor").is_dir()


@pytest.mark.parametrize("estimator", ["grpo", "tokenadv"])
def test_videozoomer_recipe_trains_whole_steps(workspace, estimator):
    """yamls/videozoomer.yaml (the multi-turn <video_zoom> rollout, zoomzero:videozoomer) as shipped (GRPO), and once
    with TokenAdv over turns: the tool-call tokens learn from the grounding rewards."""
    rows, model = workspace["agent"]
    run = workspace["root"] / f"videozoomer-{estimator}"
    run.mkdir()
    extra = ["algorithm.adv_estimator=tokenadv", "worker.reward.reward_function_kwargs.tokenadv.over_turns=true"] \
        if estimator == "tokenadv" else []
    metrics = train("videozoomer.yaml", model, rows, run, VIDEOZOOMER + extra + ["trainer.max_steps=2",
                                                                              "trainer.val_freq=2"])
    assert sorted(k for k in metrics if "actor/pg_loss" in metrics[k]) == [1, 2]
    for step in (1, 2):
        m = metrics[step]
        for key in ("agent/turns", "agent/calls", "agent/images", "reward/accuracy", "reward/format",
                    "timing_s/gen", "timing_s/update_actor"):
            assert key in m, key
        assert m["rollout/logprob_gap_max"] < GAP, "vLLM generated with weights other than the actor's"
    if estimator == "tokenadv":
        assert "tokenadv/grounding_token_share" in metrics[1]
    assert metrics[1]["actor/grad_norm"] > 0 and metrics[2]["actor/kl_loss"] > 1e-6
    assert "val/accuracy_reward" in metrics[2]
    shutil.rmtree(run / "checkpoints", ignore_errors=True)
    assert os.environ.get("EASYR1_PLUGINS_CPU") is None, "CPU mode stays in the launched processes"
