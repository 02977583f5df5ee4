"""The Qwen3-VL recipes with the tiny Qwen3-VL as their model: on EasyR1 v0.3.2 (no ``qwen3_vl`` in its
``verl/models/monkey_patch.py``) ``easyr1 train`` refuses them in one line naming the EasyR1 they need, before Ray,
vLLM or the data are touched; on EasyR1 main they dry-run. The tests of the other EasyR1 skip with the reason.

To run the EasyR1-main half here, put a checkout of EasyR1 main before the installed one (docs/easyr1.md):
``PYTHONPATH=$PWD:/path/to/EasyR1 python -m pytest tests/easyr1/test_qwen3_recipes.py``.
"""

import pytest

from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1 import vllm_stub
from zoomzero_plugin.hosts.easyr1.cli import main

from .conftest import REPO

QWEN3_RECIPES = ["zoomzero_qwen3vl", "videozoomer_qwen3vl"]


def _patches_qwen3_vl() -> bool:
    from verl.models.monkey_patch import SUPPORTED_MODEL_TYPE

    return "qwen3_vl" in SUPPORTED_MODEL_TYPE


ON_MAIN = _patches_qwen3_vl()
needs_v032 = pytest.mark.skipif(ON_MAIN, reason="the installed EasyR1 patches qwen3_vl (main): nothing to refuse")
needs_main = pytest.mark.skipif(
    not ON_MAIN,
    reason="needs EasyR1 main (qwen3_vl in verl/models/monkey_patch.py); the installed EasyR1 is v0.3.2: "
    "PYTHONPATH=$PWD:/path/to/EasyR1-main runs it (docs/easyr1.md)",
)


@pytest.fixture(autouse=True)
def no_ray(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("a refused or dry-run recipe must not start Ray"))


def _argv(recipe, model, rows, dry_run=True):
    return [
        "train",
        str(REPO / "yamls" / f"{recipe}.yaml"),
        f"data.train_files={rows}",
        f"data.val_files={rows}",
        f"worker.actor.model.model_path={model}",
        *(["--dry-run"] if dry_run else []),
    ]


@needs_v032
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "train"])
@pytest.mark.parametrize("recipe", QWEN3_RECIPES)
def test_easyr1_v032_refuses_a_qwen3_vl_recipe_in_one_line_before_anything_starts(
    recipe, dry_run, tiny_qwen3_dir, tmp_path, capsys, monkeypatch
):
    from verl.trainer import main as easyr1_main

    monkeypatch.setattr(vllm_stub, "real_vllm_importable", lambda: True)  # as on a GPU node: training may start
    monkeypatch.setattr(easyr1_main, "main", lambda: pytest.fail("EasyR1 must not be handed a model it cannot train"))
    missing = tmp_path / "no-such-rows.jsonl"  # the refusal comes first: no complaint about the data
    assert main(_argv(recipe, tiny_qwen3_dir, missing, dry_run)) == EXIT_USER
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"{tiny_qwen3_dir} is a qwen3_vl model" in err and "EasyR1 0.3.2" in err
    assert "needs EasyR1 main" in err and "git+https://github.com/hiyouga/EasyR1" in err
    assert "no-such-rows" not in err


@needs_v032
def test_easyr1_v032_still_takes_the_qwen3_recipes_on_a_qwen2_5_vl_model(benchmark_rows, easyr1_model_dir, capsys):
    """The refusal reads the model, not the recipe's name: the same recipes on the tiny Qwen2.5-VL dry-run."""
    for recipe in QWEN3_RECIPES:
        assert main(_argv(recipe, easyr1_model_dir, benchmark_rows)) == 0, capsys.readouterr().err


@needs_main
@pytest.mark.parametrize("recipe", QWEN3_RECIPES)
def test_easyr1_main_dry_runs_a_qwen3_vl_recipe(recipe, tiny_qwen3_dir, benchmark_rows, capsys):
    code = main(_argv(recipe, tiny_qwen3_dir, benchmark_rows))
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "EasyR1 0.3.3" in out.out and "no Ray cluster was started" in out.out
