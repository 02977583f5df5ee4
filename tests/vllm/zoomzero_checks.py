"""What a Zoom-Zero training launch must show, shared by the tests that launch one (tests/vllm/test_train_cli.py:
Qwen3-VL; tests/vllm/test_demo_train.py: Qwen2.5-VL through ``zoomzero demo --train``): EasyR1's metrics of each
stage, this package's, the weight sync, the updates, and what a resumed step must repeat.

Weight sync: in CPU mode EasyR1's rollout keeps vLLM's log-prob of every sampled token and the step logs how far it
is from the actor's (``rollout/logprob_gap_max``); with fp32 on both sides it is float noise (~3e-5) when vLLM has
the weights the actor trained, and about the size of the update (> 1e-2 here) when it does not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zoomzero_plugin.commands.train_demo import TinyRun

GAP = 1e-3  # max |vLLM log-prob - actor log-prob| of a sampled token when the weights agree (fp32: ~3e-5 measured)
# EasyR1's own metrics of each stage of its loop
STAGE_KEYS = (
    "timing_s/gen",
    "timing_s/old",
    "timing_s/ref",
    "timing_s/update_actor",
    "actor/pg_loss",
    "actor/grad_norm",
    "critic/score/mean",
    "response_length/mean",
)
# this package's: every reward component, the zoom pass, TokenAdv's token split
ZOOMZERO_KEYS = (
    "reward/format",
    "reward/iou",
    "reward/accuracy",
    "reward/zoom",
    "zoom/coarse_frames",
    "zoom/zoomed_share",
    "tokenadv/grounding_token_share",
)
# what a step run again from the previous step's checkpoint must log as the first time: the host seeds step s's
# sampling with worker.rollout.seed + 1000 * s, so the same weights in vLLM and the same prompts sample the same
# responses; starting weights, a data loader started over or stale weights in vLLM each change these
RESUMED_SAME = (
    "reward/overall",
    "reward/format",
    "reward/iou",
    "reward/zoom",
    "prompt_length/mean",
    "response_length/mean",
    "actor/pg_loss",
    "actor/kl_loss",
    "actor/grad_norm",
)


def logged_steps(metrics: Path) -> dict[int, dict]:
    """EasyR1's metrics file (``--metrics-file``) per step, the several log calls of a step merged."""
    steps: dict[int, dict] = {}
    for line in metrics.read_text().splitlines():
        record = json.loads(line)
        steps.setdefault(record.pop("step"), {}).update(record)
    return steps


def eval_args(mode: str, model: Path, rows: Path, out: Path, run: TinyRun) -> list[str]:
    """``zoomzero eval``'s arguments for one row of ``rows`` in ``mode`` with the merged tiny ``model`` (the pixel
    budgets of ``run``)."""
    return [
        *("eval", "--benchmark", "rows", "--mode", mode, "--model", str(model), "--data", str(rows), "--out", str(out)),
        *("--limit", "1", "--no-progress", "--max-visual-tokens", "256", "--prompt", "concise"),
        *("--min-frame-pixels", str(run.pixels(4)), "--max-frame-pixels", str(run.pixels(64))),
    ]


def trained_steps(metrics: dict[int, dict]) -> list[int]:
    return sorted(k for k in metrics if "actor/pg_loss" in metrics[k])


def check_two_zoomzero_steps(metrics: dict[int, dict], validated: tuple[int, ...]) -> None:
    """Steps 1 and 2 of one launch of a Zoom-Zero recipe (the tiny overrides: lr 2e-4), validation after each step
    of ``validated``."""
    assert trained_steps(metrics) == [1, 2]
    for step in (1, 2):
        m = metrics[step]
        for key in STAGE_KEYS + ZOOMZERO_KEYS:
            assert key in m, f"step {step}: {key}"
        assert m["actor/lr"] == pytest.approx(2e-4), "constant from step 1 (v0.3.2 gives step 1 a learning rate of 0)"
    for step in validated:
        assert "val/reward_score" in metrics[step] and "val/zoom_reward" in metrics[step], f"validation at {step}"
    assert metrics[1]["prompt_length/mean"] != metrics[2]["prompt_length/mean"], "steps 1 and 2 read different rows"
    assert metrics[1]["actor/grad_norm"] > 0, "rewards differ within a group: the update is real"
    assert metrics[2]["actor/kl_loss"] > 1e-6, "the actor moved away from the reference in step 1"
    # step 2's rollout: vLLM sampled with the weights step 1's update gave the actor
    assert metrics[2]["rollout/logprob_gap_max"] < GAP, "vLLM generated with weights other than the actor's"


def check_resumed_step(resumed: dict, first: dict) -> None:
    """A step run by a launch that loaded the previous step's checkpoint (``resumed``) against the same step of a
    launch that ran straight through (``first``)."""
    assert resumed["actor/kl_loss"] > 1e-6, "the resumed actor is the starting model, not the checkpoint's"
    assert resumed["rollout/logprob_gap_max"] < GAP, "vLLM did not get the loaded weights"
    assert resumed["prompt_length/mean"] == first["prompt_length/mean"], "the data loader started over"
    same = {k: resumed[k] for k in RESUMED_SAME}
    assert same == pytest.approx({k: first[k] for k in RESUMED_SAME}, rel=1e-4, abs=1e-7)


def actor_states(checkpoints: Path, steps: tuple[int, ...], before: Path) -> dict[int, dict]:
    """The actor's weights at each of ``steps`` (EasyR1's one-rank FSDP shards under ``checkpoints``), and at 0 the
    model in ``before``; checks that each update changed the language model's layers."""
    import torch
    from transformers import AutoModelForImageTextToText

    shard = "model_world_size_1_rank_0.pt"
    path = {s: checkpoints / f"global_step_{s}" / "actor" / shard for s in steps}
    state = {s: torch.load(path[s], map_location="cpu", weights_only=False) for s in steps}
    state = {k: {name: getattr(t, "_local_tensor", t) for name, t in v.items()} for k, v in state.items()}  # 1 rank
    state[0] = AutoModelForImageTextToText.from_pretrained(before).state_dict()
    order = (0, *steps)
    for earlier, after in zip(order, order[1:]):
        moved = [k for k in state[earlier] if not torch.equal(state[earlier][k], state[after][k])]
        assert any("language_model.layers" in k for k in moved), f"update_actor of step {after} changed no weight"
    return state


def check_merged(merged: Path, state: dict) -> None:
    """``easyr1 merge``'s Hugging Face folder ``merged`` holds exactly the weights ``state``."""
    import torch
    from transformers import AutoModelForImageTextToText

    weights = AutoModelForImageTextToText.from_pretrained(merged).state_dict()
    assert set(weights) == set(state) and all(torch.equal(weights[k], v) for k, v in state.items())
