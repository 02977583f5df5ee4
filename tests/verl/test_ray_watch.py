"""verl's own entry point in CPU mode, on a Ray too small for the run: one line naming what Ray cannot place, exit 2.

TransferQueue asks one Ray CPU per storage unit (8 by default); with 3 CPUs declared, its storage actors wait forever
and verl says nothing. The plugin's watch (in verl's driver, ``python -m verl.trainer.main_ppo`` run by hand, the CPU
platform chosen through the environment as ``zoomzero verl train --cpu`` would) ends the run instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import one_launch_at_a_time

from .test_train import RECIPES, environment


def test_a_ray_too_small_for_transferqueue_is_one_line_not_a_hang(verl_model_dir, tmp_path):
    rows = tmp_path / "rows.parquet"
    rows.write_bytes(b"")
    env = environment(
        ZOOMZERO_VERL_CPU="1",
        VERL_PLATFORM="cpu",
        VERL_ENGINE_DEVICE="cuda",
        RAY_OVERRIDE_RESOURCES=json.dumps({"GPU": 1, "CPU": 3}),
        ZOOMZERO_VERL_RAY_WAIT="20",
    )
    with one_launch_at_a_time("python -m verl.trainer.main_ppo"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "verl.trainer.main_ppo",
                "--config-path",
                str(RECIPES),
                "--config-name",
                "zoomzero",
                f"actor_rollout_ref.model.path={verl_model_dir}",
                f"data.train_files={rows}",
                f"data.val_files={rows}",
                "trainer.n_gpus_per_node=1",
                "trainer.logger=[console]",
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
    lines = [line for line in done.stderr.splitlines() if line.startswith("zoomzero verl: Ray cannot place")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(lines) == 1 and "it asks CPU 1" in lines[0] and "free" in lines[0], done.stderr[-3000:]
    assert "num_data_storage_units" in lines[0]  # the fix is named
    assert Path(tmp_path).exists()
