"""yamls/videozoomer_sft.yaml parses with LLaMA-Factory's own argument classes and holds the authors' settings
(zsgvivo/VideoZoomer scripts/sft.yaml: the values below are copied from that file by hand)."""

from pathlib import Path

import pytest
import yaml

from zoomzero_plugin.data.sft.llamafactory import CHECK_DEFAULTS

RECIPE = Path(__file__).parents[2] / "yamls" / "videozoomer_sft.yaml"

AUTHORS = {
    "model_name_or_path": "Qwen/Qwen2.5-VL-7B-Instruct",
    "image_max_pixels": 100352,
    "video_max_pixels": 100352,
    "trust_remote_code": True,
    "stage": "sft",
    "do_train": True,
    "finetuning_type": "full",
    "freeze_vision_tower": True,
    "freeze_multi_modal_projector": True,
    "freeze_language_model": False,
    "template": "qwen2_vl",
    "cutoff_len": 32768,
    "overwrite_cache": True,
    "preprocessing_num_workers": 16,
    "logging_steps": 1,
    "save_steps": 50,
    "plot_loss": True,
    "overwrite_output_dir": True,
    "save_only_model": True,
    "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 2,
    "learning_rate": 5.0e-6,
    "num_train_epochs": 1,
    "lr_scheduler_type": "cosine",
    "warmup_ratio": 0.10,
    "bf16": True,
    "ddp_timeout": 180000000,
    "flash_attn": "fa2",
}


@pytest.fixture(scope="module")
def recipe():
    return yaml.safe_load(RECIPE.read_text(encoding="utf-8"))


def test_recipe_holds_the_authors_settings(recipe):
    assert {k: recipe[k] for k in AUTHORS} == AUTHORS
    assert recipe["deepspeed"]["zero_optimization"]["stage"] == 3
    assert recipe["report_to"] == "none"  # theirs: null, which transformers reads as every installed logger


def test_recipe_parses_with_llamafactorys_argument_classes(recipe):
    from transformers import HfArgumentParser

    from zoomzero_plugin.data.sft.llamafactory import _prepare_imports

    _prepare_imports()
    from llamafactory.hparams import (
        DataArguments,
        FinetuningArguments,
        GeneratingArguments,
        ModelArguments,
        TrainingArguments,
    )

    values = dict(recipe)
    deepspeed = values.pop("deepspeed")  # transformers needs the deepspeed package to read it (GPU clusters have it)
    values["use_cpu"] = True  # bf16 needs a GPU to pass transformers' own check; everything else as written
    parser = HfArgumentParser(
        (ModelArguments, DataArguments, TrainingArguments, FinetuningArguments, GeneratingArguments)
    )
    model, data, training, finetuning, _ = parser.parse_dict(values, allow_extra_keys=False)  # unknown key: error
    assert (model.model_name_or_path, model.image_max_pixels, model.flash_attn) == (
        "Qwen/Qwen2.5-VL-7B-Instruct",
        100352,
        "fa2",
    )
    assert (data.template, data.cutoff_len, data.dataset, data.dataset_dir) == (
        "qwen2_vl",
        32768,
        ["videozoomer_sft"],
        "data/videozoomer_sft",
    )
    assert (training.learning_rate, training.num_train_epochs, training.bf16) == (5e-6, 1.0, True)
    assert training.lr_scheduler_type == "cosine" and training.warmup_ratio == 0.1
    assert finetuning.stage == "sft" and finetuning.finetuning_type == "full"
    assert finetuning.freeze_vision_tower and finetuning.freeze_multi_modal_projector
    assert not finetuning.freeze_language_model
    # HF fills every "auto" of the DeepSpeed section from the training arguments
    auto = {k for k, v in deepspeed.items() if v == "auto"}
    assert auto == {
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "gradient_accumulation_steps",
        "gradient_clipping",
    }


def test_export_checks_with_the_recipes_settings(recipe):
    assert CHECK_DEFAULTS == {k: recipe[k] for k in CHECK_DEFAULTS}
