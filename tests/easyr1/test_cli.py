"""`easyr1 train --dry-run`, `easyr1 doctor`, `easyr1 plugins`, `easyr1 runtime-env`, launch wiring, fail-fast seams."""

import dataclasses
import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1 import seams, vllm_stub
from zoomzero_plugin.hosts.easyr1.activation import (
    CHECKED_ENV,
    ENV_HOOK,
    JOB_ENV_NAMES,
    SETUP_HOOK,
    driver_runtime_env,
    export_job_env,
    ray_runtime_env_hook,
)
from zoomzero_plugin.hosts.easyr1.cli import main
from zoomzero_plugin.hosts.easyr1.errors import ConfigError
from zoomzero_plugin.hosts.easyr1.recipe import load_recipe
from zoomzero_plugin.hosts.easyr1.reward_names import FIXUP_ENV
from zoomzero_plugin.hosts.options import GVQA
from zoomzero_plugin.rows import read_rows, write_rows

from .conftest import subprocess_env


@pytest.fixture
def no_ray(monkeypatch):
    import ray

    def refuse(*args, **kwargs):
        raise AssertionError("a dry run must not start Ray")

    monkeypatch.setattr(ray, "init", refuse)


def test_dry_run_console_script_validates_and_prints_effective_settings(recipe_path):
    script = Path(sys.executable).with_name("easyr1")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "zoomzero_plugin.hosts.easyr1.cli"]
    env = subprocess_env(CUDA_VISIBLE_DEVICES="", RAY_ADDRESS="127.0.0.1:1")  # no vLLM stand-in on any path
    done = subprocess.run(
        [*command, "train", str(recipe_path), "worker.rollout.n=4", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "zoomzero" in out and "Advantage estimator: tokenadv (plugin)" in out
    assert '"max_visual_tokens": 256' in out and '"glue_components": ["format", "zoom", "iou"]' in out
    assert "gvqa/gvqa_reward.py" in out and "prompt lengths of the first 2 rows" in out
    assert "no Ray cluster was started" in out
    if not vllm_stub.real_vllm_importable():  # the launcher itself stood in for vLLM
        assert "vLLM is not installed here" in out


def dry_run(recipe, *overrides):
    return main(["train", str(recipe), *overrides, "--dry-run"])


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["worker.reward.foo=1"], "worker.reward.foo"),
        (["data.train_files=/nowhere/train.jsonl"], "data.train_files: /nowhere/train.jsonl not found"),
        (["data.format_prompt=./missing.jinja"], "data.format_prompt: './missing.jinja' not found"),
        (["worker.reward.reward_function=zoomzero:gvq"], "neither an existing file nor a plugin reward name"),
        (["algorithm.use_kl_loss=false"], "KL penalty"),
        (
            [
                "data.min_pixels=262144",
                "data.max_pixels=4194304",
                "data.max_prompt_length=1024",
                "data.filter_overlong_prompts=true",
            ],
            "prompt is 2",
        ),  # ~2.2k tokens: EasyR1's default pixels upscale the 224x168 frames
        (
            [
                "data.min_pixels=262144",
                "data.max_pixels=4194304",
                "data.max_prompt_length=1024",
                "data.filter_overlong_prompts=true",
            ],
            "EasyR1 drops such rows silently",
        ),
        (["data.min_pixels=262144", "data.max_pixels=4194304", "data.max_prompt_length=1024"], "EasyR1 truncates them"),
        (["data.min_pixels=262144"], "data.min_pixels=262144 > data.max_pixels=12544"),
    ],
)
def test_dry_run_reports_what_easyr1_would_fail_on_or_silently_skip(recipe_path, no_ray, capsys, overrides, message):
    assert dry_run(recipe_path, *overrides) == EXIT_USER
    assert message in capsys.readouterr().err


def test_dry_run_reads_the_first_rows_and_their_videos(recipe_path, benchmark_rows, tmp_path, no_ray, capsys):
    rows = read_rows(benchmark_rows)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    rows[1]["videos"] = [str(broken)]
    rows[0]["answer"] = json.dumps({"answer": "Z", "options": ["a"], "duration": 3, "qid": "x"})
    path = tmp_path / "rows.jsonl"
    write_rows(path, rows)
    assert dry_run(recipe_path, f"data.train_files={path}") == EXIT_USER
    err = capsys.readouterr().err
    assert "train row 1: video" in err and "unreadable" in err
    assert "train row 0: data.answer_key 'answer' is not a zoomzero ground truth" in err


def test_train_hands_over_to_easyr1_main_with_the_runtime_env_hook(recipe_path, monkeypatch, no_ray):
    from verl.trainer import main as easyr1_main

    monkeypatch.setattr(vllm_stub, "real_vllm_importable", lambda: True)  # as on a GPU node
    seen = {}
    monkeypatch.setattr(
        easyr1_main,
        "main",
        lambda: seen.update(
            argv=list(sys.argv), hook=os.environ.get("RAY_RUNTIME_ENV_HOOK"), seq=os.environ.get("MODEL_SEQ_LEN")
        ),
    )
    monkeypatch.setattr(sys, "argv", ["easyr1"])
    monkeypatch.delenv("RAY_RUNTIME_ENV_HOOK", raising=False)
    monkeypatch.setenv(CHECKED_ENV, "0")
    for name in ("MODEL_SEQ_LEN", JOB_ENV_NAMES):  # restored to absent after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    assert main(["train", str(recipe_path), "trainer.total_epochs=2", "--check-rows", "0"]) == 0
    assert seen["hook"] == ENV_HOOK
    assert seen["seq"] == "285"  # ceil(zoom.max_visual_tokens 256 / 0.9): the coarse pass gets the zoom budget L_v
    assert ray_runtime_env_hook(None)["env_vars"]["MODEL_SEQ_LEN"] == "285"  # and every Ray worker does
    if not load_recipe(recipe_path).adapted:  # EasyR1 0.3.2: the user's own recipe and overrides, untouched
        assert seen["argv"] == ["verl.trainer.main", f"config={recipe_path}", "trainer.total_epochs=2"]
        return
    # EasyR1 main rejects worker.reward.reward_type: it gets an adapted copy that it accepts as is
    name, config = seen["argv"]
    adapted = load_recipe(config.removeprefix("config="))
    assert name == "verl.trainer.main" and not adapted.adapted and adapted.config.trainer.total_epochs == 2


def test_an_adapted_recipe_keeps_small_numbers(tmp_path):
    """EasyR1 (both versions) makes PyYAML write a float like 2e-4 as 0.0 (its float representer rounds to 3
    decimals unless the number prints in scientific notation): the adapted copy EasyR1 main is given must keep the
    recipe's learning rate and KL coefficient exactly."""
    import verl.utils.py_functional  # noqa: F401 - registers EasyR1's float representer, as any launch does
    from omegaconf import OmegaConf

    from zoomzero_plugin.hosts.easyr1.launcher import _save_adapted

    raw = OmegaConf.create({"worker": {"actor": {"optim": {"lr": 2e-4}}}, "algorithm": {"kl_coef": 0.00015, "g": 1.0}})
    saved = OmegaConf.load(_save_adapted(raw, str(tmp_path / "zoomzero.yaml")))
    assert saved.worker.actor.optim.lr == 2e-4 and saved.algorithm.kl_coef == 0.00015 and saved.algorithm.g == 1.0


def test_runtime_env_hook_validates_the_recipe_of_python_m_verl_trainer_main(recipe_path, monkeypatch, capsys):
    """Launch path 2: EasyR1's driver built its config without plugins; its ray.init brings them."""
    monkeypatch.setattr(
        sys.modules["__main__"], "__spec__", types.SimpleNamespace(name="verl.trainer.main"), raising=False
    )
    monkeypatch.delenv(CHECKED_ENV, raising=False)
    monkeypatch.setattr(sys, "argv", ["main.py", f"config={recipe_path}"])
    env = ray_runtime_env_hook({"env_vars": {"NCCL_DEBUG": "WARN"}})
    assert env["worker_process_setup_hook"] == SETUP_HOOK
    assert env["env_vars"] == {"NCCL_DEBUG": "WARN", FIXUP_ENV: GVQA, "MODEL_SEQ_LEN": "285"}
    monkeypatch.setenv("MODEL_SEQ_LEN", "9000")  # a value the user exported wins
    assert ray_runtime_env_hook(None)["env_vars"]["MODEL_SEQ_LEN"] == "9000"
    monkeypatch.setattr(sys, "argv", ["main.py", f"config={recipe_path}", "worker.rollout.n=1"])
    with pytest.raises(ConfigError, match="worker.rollout.n must be >= 2"):
        driver_runtime_env(None)
    with pytest.raises(SystemExit) as stop:  # the hook is the edge: one message, exit 2, no traceback
        ray_runtime_env_hook(None)
    assert stop.value.code == EXIT_USER
    assert capsys.readouterr().err.startswith(
        "easyr1 plugins (RAY_RUNTIME_ENV_HOOK): 1 problem(s) with the EasyR1 config"
    )


def test_exported_job_env_keeps_the_users_value_and_says_so(monkeypatch):
    monkeypatch.setenv("MODEL_SEQ_LEN", "4000")
    monkeypatch.setenv(JOB_ENV_NAMES, "")
    monkeypatch.setenv("ZZ_TEST_VAR", "")
    monkeypatch.delenv("ZZ_TEST_VAR")  # absent now, and again after the test
    notes = export_job_env({"MODEL_SEQ_LEN": "9103", "ZZ_TEST_VAR": "1"})
    assert os.environ["MODEL_SEQ_LEN"] == "4000" and "from your environment" in notes[0]
    assert os.environ["ZZ_TEST_VAR"] == "1" and os.environ[JOB_ENV_NAMES] == "MODEL_SEQ_LEN,ZZ_TEST_VAR"


def test_job_env_budget_follows_the_models_token_size(ppo_config, tiny_qwen3_dir):
    from zoomzero_plugin.errors import ConfigError
    from zoomzero_plugin.hosts.easyr1.zoomzero.plugin import easyr1_job_env

    assert easyr1_job_env(ppo_config) == {"MODEL_SEQ_LEN": "285"}  # tiny Qwen2.5-VL, L_v = 256
    qwen25 = ppo_config.worker.actor.model.model_path
    ppo_config.worker.actor.model.model_path = str(tiny_qwen3_dir)  # 16-px patches: 32-px tokens, read from it
    assert easyr1_job_env(ppo_config) == {"MODEL_SEQ_LEN": str(math.ceil(256 / 0.9 * (32 / 28) ** 2))}
    # the zoom pass off (an ablation): the coarse pass keeps L_v, not qwen-vl-utils' 128k-token default
    ppo_config.worker.reward.reward_function_kwargs["zoom"] = {"enable": False, "max_visual_tokens": 256}
    assert easyr1_job_env(ppo_config) == {"MODEL_SEQ_LEN": str(math.ceil(256 / 0.9 * (32 / 28) ** 2))}
    del ppo_config.worker.reward.reward_function_kwargs["zoom"]  # no zoom section: the paper's L_v, 8,192
    assert easyr1_job_env(ppo_config) == {"MODEL_SEQ_LEN": "11889"}  # ceil(8192 / 0.9 * (32/28)²)
    ppo_config.worker.actor.model.model_path = "Qwen/Qwen3-VL-8B-Instruct"  # a name says nothing: read or refused
    with pytest.raises(ConfigError, match="vision geometry of Qwen/Qwen3-VL-8B-Instruct") as refused:
        easyr1_job_env(ppo_config)
    assert "\n" not in str(refused.value)
    ppo_config.worker.actor.model.model_path = qwen25
    assert easyr1_job_env(ppo_config) == {"MODEL_SEQ_LEN": "9103"}  # ceil(8192 / 0.9)
    ppo_config.algorithm.adv_estimator = "grpo_sum"
    assert easyr1_job_env(ppo_config) == {"MODEL_SEQ_LEN": "9103"}
    # a recipe that uses none of zoomzero's features is left alone
    ppo_config.algorithm.adv_estimator = "grpo"
    ppo_config.worker.reward.reward_function = "/somewhere/else.py"
    assert easyr1_job_env(ppo_config) == {}


def test_doctor_lists_versions_backend_gpus_and_every_seam(capsys):
    can_train = vllm_stub.real_vllm_importable()
    assert main(["doctor"]) == (0 if can_train else 1)
    out = capsys.readouterr().out
    for label in ("EasyR1 (verl)", "transformers", "vLLM", "Ray", "video backend", "GPUs", "plugins"):
        assert label in out
    assert "decord" in out and out.count(" patched ") == len(seams.SEAMS)
    if can_train:
        assert "all seams in place: this machine can train" in out
    else:  # never "all seams in place" and exit 0 where vLLM is missing
        assert "all seams in place, but vLLM is missing" in out and "checked with a stand-in for vLLM" in out


def test_train_without_vllm_stops_before_anything_and_says_how_to_check(recipe_path, capsys, no_ray, monkeypatch):
    monkeypatch.setattr(vllm_stub, "real_vllm_importable", lambda: False)
    assert main(["train", str(recipe_path)]) == EXIT_USER
    err = capsys.readouterr().err
    assert err.startswith("easyr1 train: vLLM is not installed") and "--dry-run" in err and len(err.splitlines()) == 1


def test_train_cpu_without_vllm_names_the_script_that_installs_the_vllm_environment(
    recipe_path, capsys, no_ray, monkeypatch
):
    monkeypatch.setattr(vllm_stub, "real_vllm_importable", lambda: False)
    monkeypatch.delenv("EASYR1_PLUGINS_CPU", raising=False)
    assert main(["train", str(recipe_path), "--cpu"]) == EXIT_USER
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "bash scripts/install-cpu.sh --vllm" in err and "--dry-run" in err
    assert "for your CUDA" not in err, "--cpu asks for no GPU build"
    assert "EASYR1_PLUGINS_CPU" not in __import__("os").environ, "nothing was set up before the refusal"


def test_plugins_lists_what_each_plugin_adds(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "zoomzero" in out and "advantage estimator 'tokenadv'" in out and f"reward function '{GVQA}'" in out
    assert "rollout hooks" in out and "config checks" in out and "rollout 'videozoomer'" in out


def test_runtime_env_prints_json_for_ray_job_submit(capsys):
    assert main(["runtime-env"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env == {"worker_process_setup_hook": SETUP_HOOK, "env_vars": {"RAY_RUNTIME_ENV_HOOK": ENV_HOOK}}


def seam(name):
    return next(s for s in seams.SEAMS if s.name == name)


def test_a_missing_seam_target_stops_with_the_easyr1_version_and_the_seam():
    import verl

    fake = types.ModuleType("verl.trainer.ray_trainer")
    fake.RayPPOTrainer = type("RayPPOTrainer", (), {"_validate": lambda self: {}})  # no _make_batch_data
    with pytest.raises(seams.SeamError) as info:
        seams.apply(seam("ray_trainer.RayPPOTrainer._make_batch_data"), fake)
    message = str(info.value)
    assert f"EasyR1 {verl.__version__}" in message and "ray_trainer.RayPPOTrainer._make_batch_data" in message
    assert "not found" in message and "rollout hooks" in message
    assert seams.status(seam("ray_trainer.RayPPOTrainer._make_batch_data"))[0] == "patched"  # the real one is


def test_a_changed_signature_stops_too():
    fake = types.ModuleType("verl.trainer.ray_trainer")
    fake.compute_advantage = lambda data, estimator_name, gamma=1.0, lam=1.0: data
    with pytest.raises(seams.SeamError, match=r"takes \(data, estimator_name, gamma, lam\)"):
        seams.apply(seam("ray_trainer.compute_advantage"), fake)


def test_reward_manager_seam_accepts_either_easyr1_version_but_not_neither():
    class AutoRewardManager:  # EasyR1 main's single manager
        def __init__(self, config, tokenizer):
            pass

    main_like = types.ModuleType("verl.workers.reward.function")
    main_like.AutoRewardManager = AutoRewardManager
    assert seams.apply(seam("reward_manager.__init__"), main_like) == ["AutoRewardManager.__init__"]
    assert getattr(AutoRewardManager.__init__, seams.MARK) == "reward_manager.__init__"
    assert seams.apply(seam("reward_manager.__init__"), main_like) == ["AutoRewardManager.__init__"]  # idempotent
    assert AutoRewardManager.__init__.__wrapped__.__name__ == "__init__"
    with pytest.raises(seams.SeamError, match="not found"):
        seams.apply(seam("reward_manager.__init__"), types.ModuleType("verl.workers.reward.function"))


def test_a_holder_that_stopped_importing_easyr1s_process_video_stops_the_run():
    source = types.ModuleType("verl.utils.dataset")
    source.process_video = lambda video, min_pixels, max_pixels, video_fps, return_fps=False: video
    holder = types.ModuleType("verl.workers.rollout.vllm_rollout_spmd")
    holder.process_video = lambda video, *a: None  # its own loader: clip specs would not reach ours
    process_video = dataclasses.replace(seam("dataset.process_video"), holders=())  # leave the real holders alone
    seams.apply(process_video, source)
    with pytest.raises(seams.SeamError, match="is not EasyR1's"):
        seams.TABLE._rebind(process_video, source, holder)
    holder.process_video = source.process_video.__wrapped__  # imported before the patch: rebound
    seams.TABLE._rebind(process_video, source, holder)
    assert holder.process_video is source.process_video
