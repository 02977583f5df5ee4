"""CPU mode for verl without starting anything: the switches, the refusals, Ray's resources, the watch, the dry run.

The recipes are the shipped ones composed as verl's entry point composes them (Hydra, verl's own ``ppo_trainer``
defaults) and checked with verl's config classes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECIPES = REPO / "yamls" / "verl"


def compose(name, *overrides):
    from zoomzero_plugin.hosts.verl import recipe

    return recipe.compose(RECIPES / f"{name}.yaml", list(overrides))


def test_the_switches_name_every_cuda_only_setting_once_and_leave_the_rest():
    from zoomzero_plugin.hosts.verl import cpu_mode

    config = compose("zoomzero")
    switches = {s.key: (s.old, s.new) for s in cpu_mode.switches(config)}
    assert switches["actor_rollout_ref.actor.strategy"] == ("fsdp", "fsdp2")
    assert switches["actor_rollout_ref.model.use_remove_padding"] == (True, False)  # the recipe's own true
    assert switches["actor_rollout_ref.rollout.enable_sleep_mode"] == (None, False)  # not in verl's YAML: a new key
    assert switches["actor_rollout_ref.actor.fsdp_config.param_offload"] == (True, False)  # the recipe offloads
    assert switches["transfer_queue.backend.SimpleStorage.num_data_storage_units"] == (8, 1)
    assert "actor_rollout_ref.rollout.n" not in switches and "data.train_batch_size" not in switches
    # applied, the switched recipe asks for no further switch, and each line names its key, the values and why
    again = compose("zoomzero", *[s.override(cpu_mode.HYDRA_SET) for s in cpu_mode.switches(config)])
    assert cpu_mode.switches(again) == []
    line = cpu_mode.Switch("a.b", True, False, "why").line()
    assert line == "cpu mode: a.b: true -> false (why)"


def test_the_switched_recipe_makes_verls_fsdp_engine_compute_in_fp32():
    """verl's FSDP engine computes in ``fsdp_config.mixed_precision.param_dtype`` (FSDP2's MixedPrecisionPolicy and
    an autocast around each forward), bf16 when a recipe sets no ``mixed_precision``; ``fsdp_config.dtype`` is not
    read by it. vLLM samples in fp32 in CPU mode, so the actor's and the reference's engines must compute in fp32 too
    (in bf16 the actor's log-probs of vLLM's samples differ by ~0.1)."""
    import torch
    from verl.utils.config import omega_conf_to_dataclass
    from verl.utils.torch_dtypes import PrecisionType

    from zoomzero_plugin.hosts.verl import cpu_mode

    config = compose("zoomzero")
    assert "mixed_precision" not in config.actor_rollout_ref.actor.fsdp_config  # verl's default: bf16 compute
    switched = compose("zoomzero", *[s.override(cpu_mode.HYDRA_SET) for s in cpu_mode.switches(config)])
    for role in ("actor", "ref"):
        engine = omega_conf_to_dataclass(switched.actor_rollout_ref[role].fsdp_config)  # verl's FSDPEngineConfig
        assert type(engine).__name__ == "FSDPEngineConfig"
        assert PrecisionType.to_dtype(engine.mixed_precision["param_dtype"]) == torch.float32, role
        assert PrecisionType.to_dtype(engine.model_dtype) == torch.float32, role
    assert PrecisionType.to_dtype(switched.actor_rollout_ref.rollout.dtype) == torch.float32


def test_what_cpu_mode_cannot_run_is_refused_naming_the_key(monkeypatch):
    from zoomzero_plugin.hosts.verl import cpu_mode

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert cpu_mode.refusals(compose("zoomzero")) == []
    refused = cpu_mode.refusals(compose("videozoomer"))  # the recipe's 2 nodes
    assert refused == ["trainer.nnodes is 2: --cpu runs on this machine only; set it to 1"]
    ulysses = compose("zoomzero", "actor_rollout_ref.actor.ulysses_sequence_parallel_size=2")
    assert "Ulysses" in cpu_mode.refusals(ulysses)[0]
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert cpu_mode.refusals(compose("zoomzero"))[-1].startswith("RAY_ADDRESS is set")


def test_ray_is_declared_one_gpu_per_worker_and_a_cpu_per_actor_and_too_few_is_one_line():
    from zoomzero_plugin.hosts.verl import cpu_mode

    config = compose(
        "zoomzero",
        "trainer.n_gpus_per_node=1",
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
        "actor_rollout_ref.rollout.agent.num_workers=2",
        "reward.num_workers=3",
    )
    # task runner 1 + TransferQueue controller 1 + 1 storage unit + 2 agent-loop + 3 reward workers + 1 worker bundle
    needed = 1 + 1 + 1 + 2 + 3 + 1
    resources = cpu_mode.ray_resources(config)
    assert resources["GPU"] == 1.0 and resources["CPU"] >= needed
    exactly = json.dumps({"GPU": 1, "CPU": resources["CPU"]})
    assert cpu_mode.lacking(config, exactly) == []  # exactly what the run needs: enough
    short = cpu_mode.lacking(config, json.dumps({"GPU": 1, "CPU": resources["CPU"] - 1}))
    assert len(short) == 1 and f"the run needs {resources['CPU']:g}" in short[0]
    assert cpu_mode.lacking(config, "{GPU: 1") == [
        "RAY_OVERRIDE_RESOURCES='{GPU: 1' is not JSON (e.g. '{\"GPU\": 1, \"CPU\": 8}')"
    ]


def test_the_watch_names_what_ray_cannot_place_and_only_that():
    from zoomzero_plugin.hosts.verl.ray_watch import stuck

    free, total = {"CPU": 0.0, "GPU": 0.0}, {"CPU": 6.0, "GPU": 1.0}
    line = stuck([("actor SimpleStorageUnit", {"CPU": 1.0})], free, total)
    assert line.startswith("Ray cannot place actor SimpleStorageUnit: it asks CPU 1, the cluster has CPU 0 of 6 free")
    assert stuck([("actor X", {"CPU": 1.0})], {"CPU": 1.0}, total) is None  # exactly one free: it can be placed
    assert stuck([], free, total) is None


@pytest.mark.parametrize("name", ["zoomzero", "videozoomer"])
def test_the_shipped_recipes_pass_verls_own_checks_on_a_tiny_model(name, verl_model_dir, tmp_path):
    """The dry run of each shipped recipe, pointed at a local model and row files (the rest as shipped), in a fresh
    process as a user runs it: verl's config classes and validate_config find nothing."""
    rows = tmp_path / "rows.parquet"
    rows.write_bytes(b"")  # the dry run checks that the files exist; it reads them only when training
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "zoomzero"),
            "verl",
            "train",
            str(RECIPES / f"{name}.yaml"),
            "--dry-run",
            f"actor_rollout_ref.model.path={verl_model_dir}",
            f"data.train_files={rows}",
            f"data.val_files={rows}",
            "trainer.nnodes=1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{name}.yaml: checked with verl's config classes; no problems" in done.stdout


def test_a_recipe_mistake_is_listed_before_anything_starts(tmp_path):
    rows = tmp_path / "rows.parquet"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "zoomzero"),
            "verl",
            "train",
            str(RECIPES / "zoomzero.yaml"),
            "--dry-run",
            f"data.train_files={rows}",
            "zoomzero.zoom.no_spans=maybe",
            "reward.reward_manager.name=videozoomer",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2  # a user mistake, as easyr1 train's
    lines = done.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("zoomzero verl train: "))
    problems = [line.removeprefix("  - ") for line in lines[at + 1 :] if line.startswith("  - ")]
    assert lines[at] == f"zoomzero verl train: {len(problems)} problem(s) with {RECIPES / 'zoomzero.yaml'}:"
    assert f"data.train_files: {rows} does not exist" in problems
    # the sections' mistakes, named where the verl recipe keeps them, by the options reader both hosts share
    assert "zoomzero.zoom.no_spans must be one of ['skip', 'uniform'], got 'maybe'" in problems
    # the recipe's GVQA weights
    weights = "unknown reward weight(s) ['iou', 'zoom']; known: ['accuracy', 'format', 'tool', 'looked']"
    assert f"zoomzero.reward: {weights}" in problems  # weights, read as the videozoomer reward's
    assert any(p.startswith("actor_rollout_ref.rollout.agent.default_agent_loop is zoomzero but") for p in problems)


def test_verl_rows_lay_the_packages_rows_out_for_verls_dataset(tmp_path):
    """``zoomzero verl rows``: the prompt as one user message, the video as a qwen-vl-utils element carrying the
    coarse pass's rate and pixel limits (and L_v as total_pixels: 256 tokens of 28-px squares), the answer JSON as
    the reward's ground truth; then verl's own RLHFDataset reads the file."""
    from zoomzero_plugin.rows import make_row, read_rows, write_rows
    from zoomzero_plugin.synthetic.videos import write_video

    path = str(write_video(tmp_path / "a.mp4", duration=2.0, fps=4, width=56, height=56))
    row = make_row(
        qid="q1",
        question="Which?",
        options=["red", "blue"],
        answer="B",
        duration=2.0,
        video=path,
        prompt="<video>Which? (A) red (B) blue",
        spans=[(1.0, 2.0)],
    )
    write_rows(tmp_path / "rows.jsonl", [row])
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "zoomzero"),
            "verl",
            "rows",
            str(tmp_path / "rows.jsonl"),
            str(tmp_path / "verl.parquet"),
            "--fps",
            "2",
            "--min-pixels",
            "3136",
            "--max-pixels",
            "12544",
            "--max-visual-tokens",
            "256",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (out,) = read_rows(tmp_path / "verl.parquet")
    assert out["prompt"] == [{"role": "user", "content": "<video>Which? (A) red (B) blue"}]
    video = {"video": path, "fps": 2.0, "min_pixels": 3136, "max_pixels": 12544, "total_pixels": 256 * 28 * 28}
    assert out["videos"] == [video]
    assert out["reward_model"]["ground_truth"] == row["answer"] and out["extra_info"] == {"index": 0, "qid": "q1"}
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from zoomzero_plugin.synthetic.tiny_qwen import build_processor

    processor = build_processor()
    config = OmegaConf.create({"max_prompt_length": 512})
    dataset = RLHFDataset(str(tmp_path / "verl.parquet"), processor.tokenizer, config, processor)
    messages = dataset[0]["raw_prompt"]
    assert messages[0]["content"][0] == {"type": "video", **video}


def test_the_watch_asks_about_its_own_ray_where_another_runs_beside_it(monkeypatch):
    # With two Ray instances on one machine the state API without an address raises "Found multiple active Ray
    # instances" on every call: the watch must name the cluster its driver is connected to.
    from ray.util import state

    from zoomzero_plugin.hosts.verl.ray_watch import pending_items

    asked = []

    def listing(kind):
        def list_(filters, address=None, detail=False, timeout=None):
            asked.append((kind, address))
            return []

        return list_

    monkeypatch.setattr(state, "list_actors", listing("actors"))
    monkeypatch.setattr(state, "list_placement_groups", listing("groups"))
    assert pending_items("192.0.2.2:35871") == []
    assert asked == [("actors", "192.0.2.2:35871"), ("groups", "192.0.2.2:35871")]


def test_a_watch_whose_state_api_never_answers_says_so_once_and_stops(monkeypatch, capsys):
    import ray

    from zoomzero_plugin.hosts.verl import ray_watch

    class Context:
        gcs_address = "192.0.2.2:35871"

    def refuse(address):
        raise ConnectionError("Found multiple active Ray instances")

    stopped = []
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "get_runtime_context", lambda: Context())
    monkeypatch.setattr(ray_watch, "pending_items", refuse)
    thread = ray_watch.watch(limit=0.05, interval=0.01, stop=stopped.append)
    thread.join(timeout=10)
    assert not thread.is_alive()  # it stopped instead of asking forever
    assert stopped == []  # nothing was found that Ray cannot place: no run is ended
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("zoomzero verl:")]
    assert len(lines) == 1 and "Ray watch stops" in lines[0] and "multiple active Ray" in lines[0]


def test_the_driver_is_recognised_while_python_m_still_imports_its_packages(tmp_path):
    # verl loads its plugins while `python -m verl.trainer.main_ppo` imports the package `verl`, before __main__ is
    # the module: a package imported the same way (`python -m drv.trainer.main`) asks in_driver from its __init__,
    # as the plugin does, and again from the module itself.
    package = tmp_path / "drv" / "trainer"
    package.mkdir(parents=True)
    ask = "from zoomzero_plugin.hosts.verl.ray_watch import in_driver\nprint('{}', in_driver('drv.trainer.main'))\n"
    (tmp_path / "drv" / "__init__.py").write_text(ask.format("package"))
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(ask.format("module"))
    (package / "other.py").write_text("")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(__file__).resolve().parents[2])])}

    def run(*argv):
        done = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert run("-m", "drv.trainer.main", "trainer.n_gpus_per_node=1") == ["package", "True", "module", "True"]
    assert run("-mdrv.trainer.main") == ["package", "True", "module", "True"]
    assert run("-c", "import drv") == ["package", "False"]  # a process that merely imports the package
    assert run("-m", "drv.trainer.other") == ["package", "False"]  # another module of it run as the main one
