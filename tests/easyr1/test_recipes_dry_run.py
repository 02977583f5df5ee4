"""Every shipped recipe in yamls/ passes `easyr1 train RECIPE --dry-run` with its data and model pointed at
fixtures (synthetic rows, the tiny model): EasyR1's own config classes, the plugin checks, the first rows
and their videos."""

from pathlib import Path

import pytest

from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1.cli import main

from .conftest import REPO

# LLaMA-Factory recipes (top-level `stage:`, e.g. videozoomer_sft.yaml) are tested in tests/sft.
RECIPES = sorted(p for p in (REPO / "yamls").glob("*.yaml") if "\nstage:" not in p.read_text())


def test_every_recipe_is_covered():
    assert {p.stem for p in RECIPES} >= {
        "stage1",
        "stage2",
        "zoomzero",
        "zoomzero_qwen3vl",
        "small_gpu",
        "eval",
        "videozoomer",
        "videozoomer_small_gpu",
        "videozoomer_qwen3vl",
    }


@pytest.fixture(autouse=True)
def no_ray(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("a dry run must not start Ray"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_passes_dry_run_on_fixtures(recipe: Path, benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
    ]
    code = main(["train", str(recipe), *overrides, "--dry-run"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "no Ray cluster was started" in out.out


def test_recipe_placeholders_are_reported_clearly(capsys):
    code = main(["train", str(REPO / "yamls" / "zoomzero.yaml"), "--dry-run"])
    out = capsys.readouterr()
    assert code != 0
    assert "data.train_files" in out.out + out.err and "not found" in out.out + out.err


@pytest.mark.parametrize("recipe", ["videozoomer", "videozoomer_small_gpu"])
def test_videozoomer_dry_run_prints_the_rollout_and_its_budgets(recipe, benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
    ]
    assert main(["train", str(REPO / "yamls" / f"{recipe}.yaml"), *overrides, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Rollout: videozoomer (plugin" in out and "agent budgets" in out
    assert '"assistant turns": 5' in out and '"per call": "<= 16 frames"' in out
    assert "first prompt" in out and "overview frames x" in out


# The recipe keys of the release before, typed here: old -> new
OLD_KEYS = {
    "zoomzero": {"max_tokens": "max_visual_tokens"},
    "videozoomer": {
        "overview_frames": "max_overview_frames",
        "call_frames": "max_frames_per_call",
        "calls": "max_calls",
        "rounds": "max_assistant_turns",
        "images": "max_images",
        "turn_tokens": "max_new_tokens",
        "total_tokens": "max_response_tokens",
        "frame_max_pixels": "max_frame_pixels",
        "frame_min_pixels": "min_frame_pixels",
    },
}


@pytest.mark.parametrize("recipe", ["zoomzero", "videozoomer"])
def test_a_recipe_in_the_old_names_still_dry_runs_and_names_the_new_ones(
    recipe, benchmark_rows, easyr1_model_dir, tmp_path, capsys, monkeypatch
):
    from zoomzero_plugin import renames

    monkeypatch.setattr(renames, "_said", set())
    text = (REPO / "yamls" / f"{recipe}.yaml").read_text().replace("no_spans: skip", "no_spans: zero")
    for old, new in OLD_KEYS[recipe].items():
        text = text.replace(f"        {new}: ", f"        {old}: ")
    assert text.count("        rounds: 5") == (recipe == "videozoomer") and "max_visual_tokens:" not in text
    old_recipe = tmp_path / f"{recipe}.yaml"
    old_recipe.write_text(text)
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
    ]
    assert main(["train", str(old_recipe), *overrides, "--dry-run"]) == 0
    err = capsys.readouterr().err
    kwargs = "worker.reward.reward_function_kwargs"
    if recipe == "videozoomer":
        assert (
            f"{kwargs}.agent.rounds is deprecated (accepted until the next release): use "
            f"{kwargs}.agent.max_assistant_turns" in err
        )
    else:
        assert (
            f"{kwargs}.zoom.max_tokens is deprecated (accepted until the next release): use "
            f"{kwargs}.zoom.max_visual_tokens" in err
        )
        assert f"{kwargs}.zoom.no_spans: zero is deprecated" in err


def test_videozoomer_checks_stop_what_cannot_train(benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        "data.max_prompt_length=200",
        "worker.reward.reward_function_kwargs.agent.max_response_tokens=40000",
        "worker.rollout.limit_images=8",
        "worker.reward.reward_function=zoomzero:gvqa",
        "algorithm.adv_estimator=remax",
    ]
    assert main(["train", str(REPO / "yamls" / "videozoomer.yaml"), *overrides, "--dry-run"]) == EXIT_USER
    err = capsys.readouterr().err
    for expected in (
        "score it with worker.reward.reward_function: zoomzero:videozoomer",
        "remax",
        "agent.max_response_tokens=40000 exceeds data.max_response_length=32768",
        "limit_images=8 is below",
    ):
        assert expected in err, err


def test_videozoomer_dry_run_measures_the_agents_first_prompt(benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        "data.max_prompt_length=700",
    ]
    assert main(["train", str(REPO / "yamls" / "videozoomer.yaml"), *overrides, "--dry-run"]) == EXIT_USER
    err = capsys.readouterr().err
    # the 12 s synthetic videos: 6 overview frames (0.5 fps) of 224x168 = 48 tokens each, plus the system prompt
    assert "train row 0: the agent's first prompt is" in err and "(6 overview frames x 48 +" in err


def test_videozoomer_refuses_estimators_that_discount_along_the_mask(benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        "algorithm.adv_estimator=reinforce_plus_plus",
    ]
    assert main(["train", str(REPO / "yamls" / "videozoomer.yaml"), *overrides, "--dry-run"]) == EXIT_USER
    assert "reinforce_plus_plus discounts returns along response_mask" in capsys.readouterr().err


def test_a_model_path_neither_here_nor_reachable_is_a_problem_at_once(tmp_path):
    """`easyr1 train yamls/videozoomer.yaml --dry-run` where checkpoints/videozoomer_sft (the SFT output) does not
    exist yet, on a machine without network and without HF_HUB_OFFLINE: the problem is said after one request to the
    Hub (once eleven retries, ~30 s). No real network: the endpoint is a local port that drops every connection."""
    import subprocess
    import sys

    from tests.helpers import no_network

    from .conftest import subprocess_env

    script = Path(sys.executable).with_name("easyr1")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "zoomzero_plugin.hosts.easyr1.cli"]
    recipe = REPO / "yamls" / "videozoomer.yaml"
    with no_network() as (endpoint, connections):
        env = subprocess_env(
            drop=("RAY_RUNTIME_ENV_HOOK", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"),
            HF_ENDPOINT=endpoint,
            HF_HOME=str(tmp_path / "hf-home"),  # an empty cache
            RAY_ADDRESS="127.0.0.1:1",  # a dry run never connects to a cluster
        )
        done = subprocess.run(
            [*command, "train", str(recipe), "--dry-run"], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        asked = connections()
    assert done.returncode == EXIT_USER, done.stdout[-3000:] + done.stderr[-3000:]
    assert (
        "  - worker.actor.model.model_path checkpoints/videozoomer_sft: no such folder, and the Hugging Face Hub "
        f"({endpoint}) cannot be reached (no connection); without network, pass a local model folder"
    ) in done.stderr.splitlines()
    assert asked == 1 and "Retrying" not in done.stdout + done.stderr  # one request, no retry
