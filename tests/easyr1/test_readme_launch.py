"""The README's launch line on a CPU: `RAY_RUNTIME_ENV_HOOK=… python3 -m verl.trainer.main config=RECIPE` runs EasyR1's
own main in a fresh process of the test venv up to the point where it needs a GPU.

It gets there only if every process imports torchvision (the venv's start-up hook), the driver's hook activates the
plugins and checks the recipe, and the Runner actor has them too (`tokenadv` passes EasyR1's estimator check only
through the host's seam). Where vLLM is not installed, its stand-in is on the PYTHONPATH (EasyR1 imports vLLM at the
top of its trainer; nothing is generated before the GPU check)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1.activation import ENV_HOOK
from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

from .conftest import subprocess_env

GPU_CHECK = "Total available GPUs 0 is less than total desired GPUs 1"  # EasyR1's ResourcePoolManager


def launch(recipe, *overrides, stand_in: bool) -> subprocess.CompletedProcess:
    env = subprocess_env(
        stand_in,
        drop=("RAY_ADDRESS",),
        RAY_RUNTIME_ENV_HOOK=ENV_HOOK,
        RAY_ADDRESS="local",
        OMP_NUM_THREADS="1",
        CUDA_VISIBLE_DEVICES="",
    )
    return subprocess.run(
        [sys.executable, "-m", "verl.trainer.main", f"config={recipe}", *overrides],
        capture_output=True,
        text=True,
        env=env,
        cwd=recipe.parent,
        timeout=300,
    )


@pytest.fixture
def main_recipe(recipe_path, tmp_path):
    """The test recipe as EasyR1's own main accepts it: on EasyR1 main without the v0.3.2 key reward_type (the docs
    say so for this launch path; `easyr1 train` adapts it by itself)."""
    if not load_recipe(recipe_path).adapted:
        return recipe_path
    path = tmp_path / recipe_path.name
    path.write_text(recipe_path.read_text().replace("    reward_type: batch\n", ""))
    return path


def test_the_readme_launch_line_runs_on_cpu_up_to_the_gpu(main_recipe, easyr1_host):
    done = launch(main_recipe, stand_in=easyr1_host)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and GPU_CHECK in out, out[-4000:]
    assert "torchvision::nms" not in out and "Could not import module" not in out
    assert "Size of train dataloader: 1" in out  # the Runner built EasyR1's trainer with tokenadv


def test_a_bad_recipe_stops_in_the_driver_with_one_line(main_recipe, easyr1_host):
    done = launch(main_recipe, "worker.rollout.n=1", stand_in=easyr1_host)
    assert done.returncode == EXIT_USER, done.stderr[-4000:]
    assert "Traceback" not in done.stderr and GPU_CHECK not in done.stdout + done.stderr
    assert (
        "easyr1 plugins (RAY_RUNTIME_ENV_HOOK): 1 problem(s)" in done.stderr
        and "worker.rollout.n must be >= 2" in done.stderr
    )
