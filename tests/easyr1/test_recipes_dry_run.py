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
