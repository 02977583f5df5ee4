"""Every recipe in yamls/ is a complete EasyR1 v0.3.2 config, checked with EasyR1's own config classes and
RLHFDataset; the paper's numbers and the team's shared names are where the recipes say they are."""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from zoomzero_plugin.gvqa.prompts import grounding_row
from zoomzero_plugin.gvqa.reward import RewardConfig
from zoomzero_plugin.gvqa.zoom import UNIFORM_FRAMES, ZoomBudget
from zoomzero_plugin.hosts.easyr1.vllm_stub import stand_in
from zoomzero_plugin.rows import write_rows

# EasyR1 recipes only: LLaMA-Factory recipes (top-level `stage:`, e.g. videozoomer_sft.yaml) are tested in tests/sft.
YAMLS = sorted(p for p in (Path(__file__).parents[2] / "yamls").glob("*.yaml") if "\nstage:" not in p.read_text())
# Zoom-Zero's recipes score with zoomzero:gvqa; VideoZoomer's RL recipes (the multi-turn rollout) are checked below.
VIDEOZOOMER = [p for p in YAMLS if "reward_function: zoomzero:videozoomer" in p.read_text()]
ZOOMZERO = [p for p in YAMLS if p not in VIDEOZOOMER]
ZOOM_KEYS = {
    "enable",
    "fps",
    "max_visual_tokens",
    "min_frame_pixels",
    "max_frame_pixels",
    "max_new_tokens",
    "no_spans",
    "uniform_frames",
    "prompt",
}
TABLE5 = ("table5_grpo", "table5_zoom", "table5_tokenadv")
# Keys whose meaning is plain from the name and EasyR1's docs; every other key line carries a comment.
OBVIOUS = {
    "data",
    "algorithm",
    "worker",
    "actor",
    "model",
    "optim",
    "fsdp",
    "offload",
    "rollout",
    "ref",
    "reward",
    "trainer",
    "prompt_key",
    "answer_key",
    "video_key",
    "image_dir",
    "mini_rollout_batch_size",
    "override_chat_template",
    "shuffle",
    "seed",
    "gamma",
    "lam",
    "disable_kl",
    "kl_penalty",
    "kl_coef",
    "online_filtering",
    "hybrid_engine",
    "strategy",
    "max_grad_norm",
    "clip_ratio_low",
    "clip_ratio_high",
    "loss_avg_mode",
    "ppo_epochs",
    "padding_free",
    "dynamic_batching",
    "ulysses_size",
    "use_torch_compile",
    "tokenizer_path",
    "enable_gradient_checkpointing",
    "trust_remote_code",
    "lr",
    "weight_decay",
    "lr_warmup_ratio",
    "enable_full_shard",
    "enable_rank0_init",
    "offload_optimizer",
    "name",
    "temperature",
    "top_p",
    "limit_images",
    "enforce_eager",
    "enable_chunked_prefill",
    "tensor_parallel_size",
    "n",
    "val_override_config",
    "reward_type",
    "reward_function_kwargs",
    "components",
    "weights",
    "tokenadv",
    "skip_special_tokens",
    "num_cpus",
    "max_steps",
    "project_name",
    "experiment_name",
    "nnodes",
    "n_gpus_per_node",
    "val_only",
    "save_limit",
    "save_model_only",
    "load_checkpoint_path",
    "val_generations_to_log",
    "filter_overlong_prompts_workers",
    "offload_params",
    "gpu_memory_utilization",
    "micro_batch_size_per_device_for_experience",
    "use_kl_loss",
    "enable_cpu_offload",
}


@pytest.fixture(scope="module")
def PPOConfig():
    """EasyR1's own PPOConfig. Its import chain reaches verl.workers.rollout, which imports vllm; where vLLM is
    not installed the package's stand-in (the one the dry run uses) serves that import."""
    with stand_in():
        from verl.trainer.config import PPOConfig
    return PPOConfig


def load(path: Path, PPOConfig, *overrides: str):
    """The recipe as EasyR1's main() builds it: structured defaults, the YAML, then dotted overrides. EasyR1 main
    has no worker.reward.reward_type (it reads the reward file's REWARD_TYPE): the key is dropped first there, as
    `easyr1 train` does."""
    default, recipe = OmegaConf.structured(PPOConfig()), OmegaConf.load(path)
    if "reward_type" not in default.worker.reward:
        recipe.worker.reward.pop("reward_type", None)
    return OmegaConf.to_object(OmegaConf.merge(default, recipe, OmegaConf.from_dotlist(list(overrides))))


@pytest.mark.parametrize("path", ZOOMZERO, ids=lambda p: p.name)
def test_recipe_is_a_complete_easyr1_config_with_the_shared_names(path, PPOConfig):
    config = load(path, PPOConfig)
    raw = OmegaConf.to_container(OmegaConf.load(path))
    assert set(raw) == {"data", "algorithm", "worker", "trainer"}
    assert set(raw["worker"]) == {"hybrid_engine", "actor", "rollout", "ref", "reward"}
    assert config.algorithm.adv_estimator == ("grpo_sum" if path.stem in TABLE5[:2] else "tokenadv")
    assert config.worker.reward.reward_function == "zoomzero:gvqa" and raw["worker"]["reward"]["reward_type"] == "batch"
    assert (config.data.prompt_key, config.data.answer_key, config.data.video_key) == ("prompt", "answer", "videos")
    kwargs = config.worker.reward.reward_function_kwargs
    reward = RewardConfig.from_kwargs(kwargs["components"], kwargs["weights"])
    zoom = kwargs["zoom"]
    assert set(zoom) == ZOOM_KEYS and zoom["no_spans"] in ("skip", "uniform") and kwargs["tokenadv"]["eps"] > 0
    assert zoom["prompt"] == "paper" and kwargs["tokenadv"]["std"] == "population"
    assert config.worker.actor.loss_avg_mode == "seq"  # Eq. 2, as the authors' config computes it
    assert ("zoom" in reward.components) == zoom["enable"]
    budget = ZoomBudget(
        max_visual_tokens=zoom["max_visual_tokens"],
        min_frame_pixels=zoom["min_frame_pixels"],
        max_frame_pixels=zoom["max_frame_pixels"],
        fps=zoom["fps"],
    )
    # EasyR1's video pitfalls: pixel bounds and fps set deliberately, not left at its image defaults.
    assert config.data.min_pixels == budget.min_frame_pixels and config.data.video_fps == budget.fps
    assert config.data.max_pixels <= 768 * 28 * 28 and config.data.min_pixels < 262144
    assert config.data.max_prompt_length >= budget.max_visual_tokens + 512  # video tokens + the prompt's text
    assert (
        config.worker.rollout.max_num_batched_tokens >= config.data.max_prompt_length + config.data.max_response_length
    )
    assert config.data.val_batch_size > 0  # -1 decodes every validation video in one batch
    # The divisibility checks of RayPPOTrainer.__init__ and FSDPWorker._build_model_optimizer (v0.3.2).
    data, actor, rollout = config.data, config.worker.actor, config.worker.rollout
    world = config.trainer.nnodes * config.trainer.n_gpus_per_node
    assert rollout.n > 1 and data.rollout_batch_size % actor.global_batch_size == 0
    assert (data.rollout_batch_size * rollout.n) % actor.micro_batch_size_per_device_for_experience == 0
    per_device = actor.global_batch_size * rollout.n // world
    assert per_device > 0 and per_device % actor.micro_batch_size_per_device_for_update == 0
    assert world % rollout.tensor_parallel_size == 0


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.name)
def test_every_non_obvious_key_has_a_comment(path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r"^\s*([A-Za-z_]\w*):", line)
        if m and m.group(1) not in OBVIOUS:
            assert "#" in line, f"{path.name}:{number}: '{m.group(1)}' needs a one-line comment"


def test_paper_numbers(PPOConfig):
    by_name = {p.stem: load(p, PPOConfig) for p in ZOOMZERO}
    paper = ZoomBudget()  # the one source of the budget defaults: the recipes must say the same
    for name in ("stage1", "stage2", "zoomzero", *TABLE5):
        c = by_name[name]
        zoom = c.worker.reward.reward_function_kwargs["zoom"]
        assert (zoom["max_visual_tokens"], c.data.video_fps, c.data.min_pixels, c.data.max_pixels) == (
            8192,
            1.0,
            16 * 28 * 28,
            768 * 28 * 28,
        )
        assert zoom["uniform_frames"] == UNIFORM_FRAMES == 20  # the authors' ~20, in evaluation and RL alike
        assert (zoom["max_visual_tokens"], zoom["fps"], zoom["min_frame_pixels"], zoom["max_frame_pixels"]) == (
            paper.max_visual_tokens,
            paper.fps,
            paper.min_frame_pixels,
            paper.max_frame_pixels,
        )
        assert (c.data.video_fps, c.data.min_pixels, c.data.max_pixels) == (
            paper.fps,
            paper.min_frame_pixels,
            paper.max_frame_pixels,
        )
        assert (c.data.max_response_length, c.data.rollout_batch_size, c.worker.rollout.n) == (512, 64, 8)
        # the authors' train_stage*.sh: global_batch_size=8 (x rollout.n 8 = 64 responses per optimizer step)
        assert c.worker.actor.global_batch_size * c.worker.rollout.n == 64
        # their core_algos.compute_policy_loss: clamp(ratio, 1 - 0.2, 1 + 0.2 + 0.08)
        assert (c.worker.actor.clip_ratio_low, c.worker.actor.clip_ratio_high) == (0.2, 0.28)
    assert by_name["stage1"].worker.actor.model.model_path == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert by_name["stage2"].worker.actor.model.model_path.startswith(by_name["stage1"].trainer.save_checkpoint_path)
    assert "Qwen3-VL" in by_name["zoomzero_qwen3vl"].worker.actor.model.model_path
    assert by_name["zoomzero_qwen3vl"].data.min_pixels == 16 * 32 * 32
    small = by_name["small_gpu"]
    assert "3B" in small.worker.actor.model.model_path and small.trainer.n_gpus_per_node == 1
    assert (small.worker.actor.fsdp.torch_dtype, small.worker.actor.optim.strategy) == ("bf16", "adamw_bf16")
    assert by_name["eval"].trainer.val_only and by_name["eval"].trainer.val_before_train
    # Stage II and the default recipe differ from stage I only in data, model, names and checkpoints.
    flat = {n: _flatten(asdict(c)) for n, c in by_name.items()}
    allowed = {
        "data.train_files",
        "data.val_files",
        "worker.actor.model.model_path",
        "trainer.experiment_name",
        "trainer.save_checkpoint_path",
        "worker.rollout.prompt_length",
        "worker.rollout.response_length",
    }
    for name in ("stage2", "zoomzero"):
        assert {k for k in flat["stage1"] if flat["stage1"][k] != flat[name][k]} <= allowed, name


def test_table5_rows_differ_only_in_what_the_table_varies(PPOConfig):
    """GRPO -> + zoom reward -> + TokenAdv: each row changes exactly the keys of its step (and its names)."""
    flat = {}
    for name in ("stage1", *TABLE5):
        config = asdict(load(Path(YAMLS[0]).parent / f"{name}.yaml", PPOConfig))
        kwargs = config["worker"]["reward"].pop("reward_function_kwargs")
        flat[name] = {**_flatten(config), **_flatten(kwargs, "reward_function_kwargs.")}
    names = {"trainer.experiment_name", "trainer.save_checkpoint_path"}

    def changed(a, b):
        return {k for k in flat[a] if flat[a][k] != flat[b][k]} - names

    assert changed("table5_grpo", "table5_zoom") == {
        "reward_function_kwargs.components",
        "reward_function_kwargs.zoom.enable",
    }
    assert changed("table5_zoom", "table5_tokenadv") == {"algorithm.adv_estimator"}
    assert changed("table5_tokenadv", "stage1") == set()  # row 3 is the full method: stage I as shipped
    assert flat["table5_grpo"]["reward_function_kwargs.components"] == ["format", "iou", "accuracy"]
    assert flat["table5_grpo"]["algorithm.adv_estimator"] == "grpo_sum"
    assert flat["table5_grpo"]["reward_function_kwargs.tokenadv"] == {"eps": 1e-6, "std": "population"}


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and k not in (
            "reward_function_kwargs",
            "val_override_config",
            "override_config",
            "tokenadv",
        ):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def test_unknown_keys_are_rejected_by_easyr1(tmp_path, PPOConfig):
    """The check above is real: EasyR1's structured config refuses keys it does not know (e.g. LoRA on v0.3.2)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(YAMLS[0].read_text() + "\nzoom:\n  enable: true\n")
    with pytest.raises(Exception, match="zoom"):
        load(bad, PPOConfig)
    if "lora" not in OmegaConf.structured(PPOConfig()).worker.actor.model:  # v0.3.2; EasyR1 main has LoRA keys
        with pytest.raises(Exception, match="lora"):
            load(YAMLS[0], PPOConfig, "worker.actor.model.lora.rank=64")


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.name)
def test_recipe_data_settings_load_rows_in_easyr1(path, PPOConfig, tiny_model_dir, tiny_processor, clip, tmp_path):
    """RLHFDataset, built exactly as EasyR1's create_dataloader does from the recipe's data section, reads a
    folder of converted rows (the recipes' data mixes) without filtering any away."""
    from verl.utils.dataset import RLHFDataset

    from zoomzero_plugin.ground_truth import GroundTruth

    folder = tmp_path / "rows"
    write_rows(
        folder / "a.jsonl",
        [
            grounding_row(
                qid="a1",
                question="Which colour?",
                options=["red", "blue"],
                answer="B",
                duration=4.0,
                video=str(clip),
                spans=[(1.0, 2.0)],
            )
        ],
    )
    write_rows(
        folder / "b.jsonl",
        [
            grounding_row(
                qid="b1",
                question="What moves?",
                options=["bar", "box", "dot"],
                answer="A",
                duration=4.0,
                video=str(clip),
            )
        ],
    )
    config = load(
        path,
        PPOConfig,
        f"data.train_files={folder}",
        f"data.val_files={folder}",
        f"worker.actor.model.model_path={tiny_model_dir}",
        "data.filter_overlong_prompts_workers=1",
    )
    config.deep_post_init()
    d = config.data
    dataset = RLHFDataset(
        data_path=d.train_files,
        tokenizer=tiny_processor.tokenizer,
        processor=tiny_processor,
        prompt_key=d.prompt_key,
        answer_key=d.answer_key,
        image_key=d.image_key,
        video_key=d.video_key,
        image_dir=d.image_dir,
        video_fps=d.video_fps,
        max_prompt_length=d.max_prompt_length,
        truncation="right",
        format_prompt=d.format_prompt,
        min_pixels=d.min_pixels,
        max_pixels=d.max_pixels,
        filter_overlong_prompts=d.filter_overlong_prompts,
        filter_overlong_prompts_workers=d.filter_overlong_prompts_workers,
    )
    assert len(dataset) == 2
    assert sorted(GroundTruth.parse(item["ground_truth"]).qid for item in dataset) == ["a1", "b1"]
    assert config.worker.actor.model.model_path == str(tiny_model_dir)


@pytest.mark.parametrize("path", ZOOMZERO, ids=lambda p: p.name)  # video frames (VideoZoomer's are images)
def test_recipes_state_tokens_per_frame_in_one_unit(path):
    """16·28² and 768·28² pixels are 8 and 384 tokens per frame (16 and 768 per two-frame temporal patch):
    a recipe never calls 16 or 768 a per-frame token count."""
    text = path.read_text()
    for wrong in ("16 tokens per frame", "768 tokens per frame", "16..768 tokens per frame"):
        assert wrong not in text, f"{path.name}: '{wrong}' (a frame of 16·28² px costs 8 tokens, docs/easyr1.md)"
    if "min_pixels: 12544" in text:
        assert "8 tokens per frame" in text and "384 tokens per frame" in text


@pytest.mark.parametrize("path", VIDEOZOOMER, ids=lambda p: p.name)
def test_videozoomer_recipe_is_a_complete_easyr1_config(path, PPOConfig):
    from zoomzero_plugin.hosts.easyr1.zoomzero.options import recipe_options

    config = load(path, PPOConfig)
    data, actor, rollout = config.data, config.worker.actor, config.worker.rollout
    assert (
        config.worker.reward.reward_function == "zoomzero:videozoomer"
        and "zoom" not in config.worker.reward.reward_function_kwargs
    )
    agent = recipe_options(config).checked().agent
    assert agent.enable and agent.prompt == "train"
    budget = agent.budget
    assert budget.max_response_tokens <= data.max_response_length and budget.max_images <= rollout.limit_images
    assert rollout.max_num_batched_tokens >= data.max_prompt_length + data.max_response_length
    assert config.algorithm.use_kl_loss and config.algorithm.kl_penalty == "low_var_kl"
    assert (config.algorithm.online_filtering, config.algorithm.filter_key) == (True, "accuracy")
    world = config.trainer.nnodes * config.trainer.n_gpus_per_node
    assert rollout.n > 1 and data.rollout_batch_size % actor.global_batch_size == 0
    per_device = actor.global_batch_size * rollout.n // world
    assert per_device > 0 and per_device % actor.micro_batch_size_per_device_for_update == 0


def test_videozoomer_authors_rl_numbers(PPOConfig):
    """scripts/train_video.sh of the released code, on EasyR1 keys (docs/easyr1.md lists what EasyR1 lacks)."""
    from zoomzero_plugin.hosts.easyr1.zoomzero.options import recipe_options

    c = load(Path(__file__).parents[2] / "yamls" / "videozoomer.yaml", PPOConfig)
    b = recipe_options(c).checked().agent.budget
    assert (c.algorithm.adv_estimator, c.worker.rollout.n, c.data.rollout_batch_size) == ("grpo", 16, 128)
    assert (c.worker.actor.optim.lr, c.worker.actor.clip_ratio_low, c.worker.actor.clip_ratio_high) == (1e-6, 0.2, 0.27)
    assert (c.algorithm.kl_coef, c.algorithm.kl_penalty, c.worker.actor.global_batch_size) == (1e-3, "low_var_kl", 32)
    assert (b.max_overview_frames, b.overview_fps, b.max_frames_per_call) == (64, 0.5, 16)
    assert (b.max_calls, b.max_assistant_turns, b.max_images) == (4, 5, 128)
    assert (b.max_new_tokens, b.max_response_tokens) == (4096, 32768)
    assert (b.min_frame_pixels, b.max_frame_pixels) == (25088, 100352)
    weights = c.worker.reward.reward_function_kwargs["weights"]
    assert (weights["accuracy"], weights["format"], weights["tool"]) == (0.9, 0.1, 0.0)
    assert (c.worker.rollout.val_override_config["n"], c.worker.rollout.val_override_config["temperature"]) == (1, 0.0)


def test_the_qwen3_vl_videozoomer_recipes_are_the_authors_in_32_px_tokens(PPOConfig):
    """yamls/videozoomer_qwen3vl.yaml is yamls/videozoomer.yaml with a Qwen3-VL cold start and the same frame budgets
    in tokens: 128 and 32 tokens a frame are 128·28² = 100,352 and 32·28² = 25,088 px on Qwen2.5-VL, 128·32² =
    131,072 and 32·32² = 32,768 px on Qwen3-VL. The SFT recipe's images are capped at the same 128·32²."""
    import yaml

    root = Path(__file__).parents[2] / "yamls"
    base, qwen3 = (load(root / f"{name}.yaml", PPOConfig) for name in ("videozoomer", "videozoomer_qwen3vl"))
    agent = qwen3.worker.reward.reward_function_kwargs["agent"]
    assert (agent["max_frame_pixels"], agent["min_frame_pixels"], agent["clip_as"]) == (131072, 32768, "images")
    flat = {n: _flatten(asdict(c)) for n, c in (("base", base), ("qwen3", qwen3))}
    changed = {k for k in flat["base"] if flat["base"][k] != flat["qwen3"].get(k)}
    assert changed == {
        "worker.actor.model.model_path",
        "trainer.experiment_name",
        "worker.reward.reward_function_kwargs",
    }, changed
    base_agent = base.worker.reward.reward_function_kwargs["agent"]
    assert {k for k in {*agent, *base_agent} if agent.get(k) != base_agent.get(k)} == {
        "max_frame_pixels",
        "min_frame_pixels",
        "clip_as",
    }  # clip_as: written out, the default
    sft = {n: yaml.safe_load((root / f"{n}.yaml").read_text()) for n in ("videozoomer_sft", "videozoomer_sft_qwen3vl")}
    assert (sft["videozoomer_sft"]["image_max_pixels"], sft["videozoomer_sft_qwen3vl"]["image_max_pixels"]) == (
        128 * 28 * 28,
        128 * 32 * 32,
    )
    assert sft["videozoomer_sft_qwen3vl"]["template"] == "qwen3_vl"
    assert "Qwen3-VL" in sft["videozoomer_sft_qwen3vl"]["model_name_or_path"]
    different = {k for k in sft["videozoomer_sft"] if sft["videozoomer_sft"][k] != sft["videozoomer_sft_qwen3vl"][k]}
    assert different == {
        "model_name_or_path",
        "image_max_pixels",
        "video_max_pixels",
        "template",
        "dataset_dir",
        "output_dir",
    }
