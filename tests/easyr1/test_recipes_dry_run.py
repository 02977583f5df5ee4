"""Every shipped recipe in yamls/ passes `easyr1 train RECIPE --dry-run` with its data and model pointed at
fixtures (synthetic rows, the tiny model): EasyR1's own config classes, the plugin checks, the first rows
and their videos."""

from pathlib import Path

import pytest

from zoomzero_plugin.hosts.easyr1.cli import main

from .conftest import REPO

# LLaMA-Factory recipes (top-level `stage:`, e.g. videozoomer_sft.yaml) are tested in tests/sft.
RECIPES = sorted(p for p in (REPO / "yamls").glob("*.yaml") if "\nstage:" not in p.read_text())


def test_every_recipe_is_covered():
    assert {p.stem for p in RECIPES} >= {"stage1", "stage2", "zoomzero", "zoomzero_qwen3vl", "small_gpu", "eval"}


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
