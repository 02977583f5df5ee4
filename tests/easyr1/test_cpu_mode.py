"""CPU mode's pieces that need no running loop (the loop itself: tests/vllm/test_train_cli.py): the recipe switches
on EasyR1's own config classes, the refusals, the resources declared to Ray, the CPU seams' scope, the sampler
check's arithmetic, the metrics file and v0.3.2's first-step learning rate."""

from __future__ import annotations

import json

import pytest
import torch

from zoomzero_plugin.hosts.easyr1 import cpu_mode, cpu_seams, seams
from zoomzero_plugin.hosts.easyr1.lr_schedule import wrap_constant_schedule
from zoomzero_plugin.hosts.easyr1.metrics_file import append
from zoomzero_plugin.hosts.easyr1.sampler_check import logprob_gap


@pytest.fixture
def zoomzero_config():
    from pathlib import Path

    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    return load_recipe(Path(__file__).resolve().parents[2] / "yamls" / "zoomzero.yaml").config


def test_switches_of_the_shipped_recipe(zoomzero_config):
    found = {s.key: (s.old, s.new) for s in cpu_mode.switches(zoomzero_config.worker)}
    # yamls/zoomzero.yaml asks for each of these (padding_free, torch.compile, rank-0 init, offloads, no eager)
    assert found["worker.actor.padding_free"] == (True, False)
    assert found["worker.actor.use_torch_compile"] == (True, False)
    assert found["worker.actor.fsdp.enable_rank0_init"] == (True, False)
    assert found["worker.ref.fsdp.enable_cpu_offload"] == (True, False)
    assert found["worker.actor.offload.offload_params"] == (True, False)
    assert found["worker.rollout.dtype"] == ("bf16", "fp32")
    assert found["worker.rollout.enforce_eager"] == (False, True)
    assert found["worker.ref.fsdp.torch_dtype"] == (None, "fp32")
    assert "worker.rollout.tensor_parallel_size" not in found  # the recipe has 1 already
    line = next(s for s in cpu_mode.switches(zoomzero_config.worker) if s.key == "worker.actor.padding_free").line()
    assert line.startswith("cpu mode: worker.actor.padding_free: true -> false (")


def test_switches_as_overrides_give_a_config_with_nothing_left_to_switch(zoomzero_config):
    from pathlib import Path

    from zoomzero_plugin.hosts.easyr1.recipe import load_recipe

    overrides = [s.override() for s in cpu_mode.switches(zoomzero_config.worker)]
    again = load_recipe(Path(__file__).resolve().parents[2] / "yamls" / "zoomzero.yaml", overrides).config
    assert cpu_mode.switches(again.worker) == []
    assert again.worker.ref.padding_free is False  # EasyR1's post_init copied the actor's switched value


def test_apply_switches_a_built_config_and_the_refs_copies(zoomzero_config):
    worker = zoomzero_config.worker
    assert worker.ref.padding_free is True  # EasyR1's post_init copied the actor's
    done = cpu_mode.apply(worker)
    assert len(done) > 5 and cpu_mode.switches(worker) == []
    assert worker.ref.padding_free is False and worker.ref.use_torch_compile is False


def test_refusals(zoomzero_config):
    assert cpu_mode.refusals(zoomzero_config.worker, 1) == []
    zoomzero_config.worker.actor.ulysses_size = 2
    problems = cpu_mode.refusals(zoomzero_config.worker, 2)
    assert len(problems) == 2 and "ulysses_size is 2" in problems[0] and "trainer.nnodes is 2" in problems[1]


def test_ray_resources(zoomzero_config, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    zoomzero_config.trainer.n_gpus_per_node = 2
    # 2 worker bundles (1 CPU each) + the Runner (1) + two reward actors (1 each) = 5 CPUs, 2 "GPUs"
    assert cpu_mode.ray_resources(zoomzero_config) == {"GPU": 2.0, "CPU": 5.0}
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert cpu_mode.ray_resources(zoomzero_config)["CPU"] == 16.0


def test_prepare_driver_keeps_a_users_resources(zoomzero_config, monkeypatch):
    monkeypatch.setenv(cpu_mode.RESOURCES_ENV, '{"GPU": 4}')
    notes = cpu_mode.prepare_driver(zoomzero_config)
    assert "from your environment" in notes[0]
    assert json.loads(__import__("os").environ[cpu_mode.RESOURCES_ENV]) == {"GPU": 4}


def test_cpu_torch_answers_only_inside_the_module_it_stands_in():
    stand_in = cpu_seams.wrap_torch(torch)
    assert stand_in.cuda.current_device() == torch.device("cpu")
    assert stand_in.cuda.get_device_name() == "CPU" and stand_in.cuda.max_memory_allocated() == 0
    assert stand_in.float32 is torch.float32 and stand_in.tensor is torch.tensor  # the rest is torch's own
    assert stand_in.cuda.is_available is torch.cuda.is_available
    assert torch.cuda.current_device is not stand_in.cuda.current_device  # torch itself is untouched
    state = torch.get_rng_state()
    stand_in.cuda.manual_seed(7)
    assert torch.equal(stand_in.cuda.get_rng_state(), torch.manual_seed(7).get_state())
    torch.set_rng_state(state)


def test_cpu_seams_are_not_installed_unless_asked(monkeypatch):
    import verl.workers.fsdp_workers as workers

    monkeypatch.delenv(cpu_mode.CPU_ENV, raising=False)
    assert not cpu_mode.requested()
    assert workers.torch is torch  # the plugins are active in this process, CPU mode is not
    for seam in cpu_seams.CPU_SEAMS:  # a seam whose module this EasyR1 lacks (EasyR1 main's only): not needed
        state = seams.status(seam, import_modules=True)[0]
        assert state == "unpatched" or (seam.since and state == "not needed"), seam.name


@pytest.mark.parametrize(
    ("value", "asked"),
    [("1", True), ("true", True), ("yes", True), ("", False), ("0", False), ("false", False), ("False", False)]
    + [("FALSE", False), ("no", False), ("off", False), ("Off", False), (" 0 ", False)],
)
def test_cpu_mode_is_on_only_when_the_variable_says_so(monkeypatch, value, asked):
    """EASYR1_PLUGINS_CPU=off (or FALSE, no) on a GPU machine must not switch its workers to gloo and the CPU."""
    monkeypatch.setenv(cpu_mode.CPU_ENV, value)
    assert cpu_mode.requested() is asked


def test_logprob_gap_by_hand():
    from verl.protocol import DataProto

    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    data = DataProto.from_dict(
        {
            "response_mask": mask,
            "rollout_log_probs": torch.tensor([[-1.0, -2.0, 0.0], [-0.5, 0.0, 0.0]]),
            "old_log_probs": torch.tensor([[-1.1, -2.0, -9.0], [-0.2, -7.0, 0.0]]),
        },
        meta_info={"temperature": 1.0},
    )
    gap = logprob_gap(data)  # sampled tokens: |0.1|, |0|, |0.3| -> max 0.3, mean 0.4 / 3; padding ignored
    assert gap["rollout/logprob_gap_max"] == pytest.approx(0.3)
    assert gap["rollout/logprob_gap_mean"] == pytest.approx(0.4 / 3)
    data.meta_info["temperature"] = 0.7  # vLLM reports the raw distribution's log-probs: no comparison
    assert logprob_gap(data) == {}
    assert logprob_gap(DataProto.from_dict({"response_mask": mask})) == {}


def test_metrics_file_appends_one_line_per_call(tmp_path):
    path = tmp_path / "runs" / "m.jsonl"
    append(str(path), {"reward/overall": torch.tensor(0.5), "actor/lr": 1e-4}, 1)
    append(str(path), {"val/reward_score": 0.25}, 1)
    assert [json.loads(x) for x in path.read_text().splitlines()] == [
        {"step": 1, "reward/overall": 0.5, "actor/lr": 1e-4},
        {"step": 1, "val/reward_score": 0.25},
    ]


def test_first_step_learning_rate():
    from verl.utils.torch_functional import get_constant_schedule_with_warmup

    def lrs(schedule, warmup):
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
        scheduler = schedule(optimizer, warmup)
        out = []
        for _ in range(3):
            out.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
        return out

    import verl

    if verl.__version__.startswith("0.3.2"):
        assert lrs(get_constant_schedule_with_warmup, 0) == [0.0, 0.1, 0.1]  # EasyR1 0.3.2 as shipped
    fixed = wrap_constant_schedule(get_constant_schedule_with_warmup)
    assert lrs(fixed, 0) == [0.1, 0.1, 0.1]
    assert lrs(fixed, 2) == pytest.approx([0.0, 0.05, 0.1])  # a warmup is EasyR1's own


def test_a_split_seeded_prompt_is_refused_with_the_setting_to_change():
    from types import SimpleNamespace

    from zoomzero_plugin.errors import ConfigError

    def crashing(*args, **kwargs):
        raise RuntimeError("CPU Generator does not use offset")

    def other(*args, **kwargs):
        raise RuntimeError("something else")

    with pytest.raises(ConfigError, match="max_num_batched_tokens=4096; raise it"):
        cpu_seams.split_seeded_prompt_refused(crashing, SimpleNamespace(max_num_batched_tokens=4096))()
    with pytest.raises(RuntimeError, match="something else"):
        cpu_seams.split_seeded_prompt_refused(other, SimpleNamespace(max_num_batched_tokens=4096))()
    assert cpu_seams.split_seeded_prompt_refused(lambda x: x + 1, None)(1) == 2


@pytest.fixture
def cpu_workers(monkeypatch):
    """EasyR1's own fsdp_workers module with the CPU seams on its mesh builder and model loaders (restored after)."""
    import verl.workers.fsdp_workers as workers

    chosen = [
        s
        for s in cpu_seams.CPU_SEAMS
        if s.name in ("cpu:fsdp_workers.init_device_mesh", "cpu:fsdp_workers.auto_classes")
    ]
    assert len(chosen) == 2
    for seam in chosen:
        for target in seam.targets:
            monkeypatch.setattr(workers, target, getattr(workers, target))  # undone after the test
        seams.apply(seam, workers)
    return workers


def test_the_device_mesh_easyr1_asks_on_cuda_is_built_on_the_cpu(cpu_workers):
    """EasyR1: ``init_device_mesh("cuda", mesh_shape=(world_size,), mesh_dim_names=("fsdp",))``. torch builds a CUDA
    mesh lazily even without a GPU (FSDP then fails on it): the seam must hand it "cpu"."""
    import socket

    import torch.distributed as dist

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        mesh = cpu_workers.init_device_mesh("cuda", mesh_shape=(1,), mesh_dim_names=("fsdp",))
        assert mesh.device_type == "cpu" and mesh.mesh_dim_names == ("fsdp",)
    finally:
        dist.destroy_process_group()


def test_the_model_easyr1_loads_for_cuda_with_flash_attention_loads_on_the_cpu_with_sdpa(cpu_workers, tiny_model_dir):
    """EasyR1 (rank-0 init off): ``from_pretrained(path, config=…, torch_dtype=…, attn_implementation=
    "flash_attention_2", device_map="cuda", low_cpu_mem_usage=True)``; with rank-0 init, ``from_config`` too."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_model_dir)
    model = cpu_workers.AutoModelForImageTextToText.from_pretrained(
        tiny_model_dir,
        config=config,
        torch_dtype=torch.float32,
        attn_implementation="flash_attention_2",
        device_map="cuda",
        low_cpu_mem_usage=True,
    )
    assert {p.device.type for p in model.parameters()} == {"cpu"}
    assert model.config._attn_implementation == "sdpa"
    empty = cpu_workers.AutoModelForImageTextToText.from_config(
        config, torch_dtype=torch.float32, attn_implementation="flash_attention_2"
    )
    assert empty.config._attn_implementation == "sdpa"


def test_easyr1s_loaders_load_in_the_runner_in_cpu_mode(monkeypatch, zoomzero_config, tmp_path, tiny_tokenizer):
    """EasyR1's own ``create_dataloader`` asks ``StatefulDataLoader(..., num_workers=8)`` for both loaders; under the
    CPU seam both load in the calling process (0 workers), and still yield the rows."""
    import verl.trainer.data_loader as data_loader

    asked = []
    real = data_loader.StatefulDataLoader

    def recording(*args, **kwargs):
        asked.append(kwargs["num_workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(data_loader, "StatefulDataLoader", recording)  # EasyR1's call, recorded; undone after
    seams.apply(next(s for s in cpu_seams.CPU_SEAMS if s.name == "cpu:data_loader.StatefulDataLoader"), data_loader)
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"prompt": f"question {i}", "answer": "A"}) + "\n" for i in range(4)))
    data = zoomzero_config.data
    for key, value in dict(train_files=str(rows), val_files=str(rows), rollout_batch_size=2, val_batch_size=2).items():
        setattr(data, key, value)
    data.mini_rollout_batch_size, data.format_prompt, data.video_key, data.image_key = None, None, "videos", "images"
    train, val = data_loader.create_dataloader(data, tiny_tokenizer, None)
    assert asked == [0, 0], "EasyR1 asked for 8 workers; the seam loads in the calling process"
    assert train.num_workers == val.num_workers == 0
    assert len(next(iter(train))["input_ids"]) == 2
