"""Checking an exported dataset with LLaMA-Factory's own code, before anyone trains on it.

LLaMA-Factory drops a sample with a wrong role order with one printed line, stops the whole run on a wrong
``<image>`` count, and truncates a sample longer than ``cutoff_len`` (through image tokens: "Image features and
image tokens do not match" at the model step). :class:`LlamaFactoryCheck` runs each sample through the same
functions its trainer uses — the ``dataset_info.json`` parser, the sharegpt converter, the template and the
supervised processor with the model's tokenizer and processor — and turns each of those into an error that
names the sample. It needs ``llamafactory`` (0.9.x) and the model's tokenizer/processor files, not its weights.

Settings come from a LLaMA-Factory recipe (``template``, ``cutoff_len``, ``image_max_pixels`` …), parsed with
LLaMA-Factory's own argument classes, so the check measures what training will see. :func:`check_with_llamafactory`
runs it over an export's samples and names those LLaMA-Factory would drop, refuse or cut.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...agent import AgentBudget
from ...cpu_compat import ensure_torchaudio_importable, ensure_torchvision_importable
from ...errors import DataError, DependencyError, ModelError
from .sharegpt import Sample

SUPPORTED = "0.9."
# LLaMA-Factory settings the length check uses; the defaults are yamls/videozoomer_sft.yaml's (a test keeps
# them equal): its images are the agent's frames, so image_max_pixels is the agent's frame limit.
CHECK_DEFAULTS = {"template": "qwen2_vl", "cutoff_len": 32768, "image_max_pixels": AgentBudget.max_frame_pixels}
_TRAIN_ONLY_KEYS = ("deepspeed",)  # TrainingArguments keys that need GPU-side packages to even parse


def llamafactory_version() -> str:
    try:
        version = importlib.metadata.version("llamafactory")
    except importlib.metadata.PackageNotFoundError:
        raise DependencyError(
            "LLaMA-Factory is not installed: pip install 'llamafactory==0.9.5' (the export checks "
            "every sample with its loader and template; --no-llamafactory-check skips that)"
        ) from None
    if not version.startswith(SUPPORTED):
        raise DependencyError(
            f"llamafactory {version} is installed; this export is tested with 0.9.5 (pip install 'llamafactory==0.9.5')"
        )
    return version


def _prepare_imports() -> None:
    ensure_torchaudio_importable()  # LLaMA-Factory imports torchaudio at start; a no-op where it loads
    ensure_torchvision_importable()


def parse_recipe(recipe: Mapping[str, Any]):
    """``(ModelArguments, DataArguments)`` from a recipe mapping, through LLaMA-Factory's argument classes
    (unknown keys of other groups are allowed; a wrong value raises their own ValueError)."""
    llamafactory_version()
    _prepare_imports()
    from llamafactory.hparams import DataArguments, ModelArguments
    from transformers import HfArgumentParser

    values = {k: v for k, v in recipe.items() if k not in _TRAIN_ONLY_KEYS}
    model_args, data_args = HfArgumentParser((ModelArguments, DataArguments)).parse_dict(values, allow_extra_keys=True)
    return model_args, data_args


class LlamaFactoryCheck:
    """Measure samples as LLaMA-Factory's SFT trainer would tokenize them.

    ``recipe``: LLaMA-Factory keys (at least ``template`` and ``cutoff_len``; ``model_name_or_path`` is
    replaced by ``model`` when given). ``dataset_dir`` holds ``dataset_info.json`` naming ``dataset``.
    """

    def __init__(
        self, recipe: Mapping[str, Any], dataset_dir: str | os.PathLike, dataset: str, model: str | None = None
    ):
        values = dict(recipe)
        if model:
            values["model_name_or_path"] = model
        values.update(dataset=dataset, dataset_dir=str(dataset_dir), media_dir=str(dataset_dir))
        self.version = llamafactory_version()
        model_args, data_args = parse_recipe(values)
        from llamafactory.data import get_template_and_fix_tokenizer
        from llamafactory.data.converter import get_dataset_converter
        from llamafactory.data.parser import get_dataset_list
        from llamafactory.data.processor import SupervisedDatasetProcessor
        from llamafactory.model import load_tokenizer

        try:
            modules = load_tokenizer(model_args)
        except (OSError, ValueError) as e:
            raise ModelError(
                f"cannot load the tokenizer/processor of {model_args.model_name_or_path!r} for the "
                f"length check ({str(e).splitlines()[0]}); pass --model with a local Qwen2.5-VL "
                "folder (tokenizer and processor files suffice)"
            ) from None
        self.cutoff_len = int(data_args.cutoff_len)
        self.template_name = data_args.template
        template = get_template_and_fix_tokenizer(modules["tokenizer"], data_args)
        [attr] = get_dataset_list([dataset], str(dataset_dir))
        self.converter = get_dataset_converter(attr.formatting, attr, data_args)
        data_args.cutoff_len = 1 << 30  # measure the whole sample; the real cutoff is compared after
        self.processor = SupervisedDatasetProcessor(
            template=template, tokenizer=modules["tokenizer"], processor=modules["processor"], data_args=data_args
        )
        self.tokenizer = modules["tokenizer"]

    def tokenize(self, row: Mapping[str, Any]) -> dict[str, list]:
        """``{"input_ids", "labels"}`` of one dataset row, as the trainer builds them; ValueError with the
        reason when LLaMA-Factory would drop or refuse it."""
        converted = self.converter(dict(row))
        if not converted["_prompt"] or not converted["_response"]:
            raise ValueError(
                "LLaMA-Factory's sharegpt converter drops it: the roles do not alternate "
                "user/observation → assistant, ending with the assistant"
            )
        batch = {k: [v] for k, v in converted.items()}
        try:
            out = self.processor.preprocess_dataset(batch)
        except (ValueError, FileNotFoundError, OSError) as e:
            raise ValueError(
                f"LLaMA-Factory refuses it: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            ) from None
        if not out["input_ids"]:
            raise ValueError("LLaMA-Factory's supervised processor drops it")
        return {"input_ids": out["input_ids"][0], "labels": out["labels"][0]}

    def length(self, row: Mapping[str, Any]) -> int:
        """Tokens of the whole sample (image tokens expanded); ValueError when it would be dropped."""
        return len(self.tokenize(row)["input_ids"])


def check_with_llamafactory(
    samples: list[Sample],
    stage: Path,
    name: str,
    recipe: dict[str, Any],
    model: str | None,
    drop_long: bool,
    progress: bool,
) -> tuple[list[Sample], dict[str, Any]]:
    """Measure every sample with LLaMA-Factory; DataError naming the samples it would drop, refuse or cut."""
    from tqdm import tqdm

    check = LlamaFactoryCheck(recipe, stage, name, model=model)
    lengths, refused, long = {}, [], []
    for s in tqdm(samples, desc="llamafactory check", unit="sample", disable=not progress):
        try:
            lengths[s.id] = check.length(s.row())
        except ValueError as e:
            refused.append(f"{s.id}: {e}")
            continue
        if lengths[s.id] > check.cutoff_len:
            long.append(s.id)
    if refused:
        raise DataError(
            f"LLaMA-Factory {check.version} would not train on {len(refused)} sample(s): " + "; ".join(refused[:5])
        )
    if long and not drop_long:
        worst = sorted(long, key=lambda i: -lengths[i])[:5]
        raise DataError(
            f"{len(long)} sample(s) exceed cutoff_len {check.cutoff_len} with template "
            f"{check.template_name} (LLaMA-Factory would cut them, through image tokens): "
            + ", ".join(f"{i} ({lengths[i]} tokens)" for i in worst)
            + "; raise --cutoff-len (and the recipe's), lower --max-images/--max-frame-pixels, "
            "or pass --drop-long"
        )
    too_long = set(long)
    kept = [s for s in samples if s.id not in too_long]
    for s in samples:
        if s.id in too_long:
            shutil.rmtree(stage / "images" / s.id, ignore_errors=True)
    values = [lengths[s.id] for s in kept]
    info = {
        "llamafactory": check.version,
        "template": check.template_name,
        "cutoff_len": check.cutoff_len,
        "over_cutoff": len(long),
        "tokens_max": max(values, default=0),
        "tokens_mean": round(sum(values) / len(values), 1) if values else 0,
    }
    return kept, info
