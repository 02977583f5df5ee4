"""``easyr1 merge``: an actor checkpoint's FSDP shards → a Hugging Face model folder (what ``zoomzero eval`` loads).

EasyR1 saves ``global_step_N/actor/model_world_size_W_rank_R.pt`` (each rank's share of the parameters, DTensors
when W > 1) next to ``huggingface/`` (config, generation config, processor). EasyR1's own merger is a script of its
repository (``scripts/model_merger.py``) that the pip package (``lazyllm-verl``) does not ship; this command does the
same job wherever EasyR1 is installed: every shard's local tensors joined along their DTensor placement, loaded
into the model class the config names, saved with ``save_pretrained`` beside the config (or to ``--out``). Unlike
EasyR1's script it keeps the checkpoint's dtype unless ``--dtype`` says otherwise (EasyR1's writes bf16).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .errors import UsageError

_SHARD = re.compile(r"model_world_size_(\d+)_rank_(\d+)\.pt")


def shard_files(actor_dir: Path) -> list[Path]:
    """The rank files of one world size, in rank order. Raises :class:`UsageError` when they are not all there."""
    found = {int(m.group(2)): (int(m.group(1)), p) for p in actor_dir.iterdir() if (m := _SHARD.fullmatch(p.name))}
    if not found:
        raise UsageError(
            f"{actor_dir} holds no model_world_size_W_rank_R.pt: give the actor folder of a checkpoint "
            "(CHECKPOINTS/global_step_N/actor)"
        )
    world = found[0][0] if 0 in found else max(w for w, _ in found.values())
    missing = [r for r in range(world) if r not in found]
    if missing:
        raise UsageError(f"{actor_dir}: world size {world} but no shard for rank(s) {missing}")
    return [found[r][1] for r in range(world)]


def merged_state_dict(files: list[Path]) -> dict:
    """One full tensor per parameter: DTensor local shards joined by their placement (Shard(d): concatenated
    along d in rank order; Replicate: rank 0's); plain tensors (world size 1) as they are."""
    import torch
    from torch.distributed.tensor import DTensor

    shards = [torch.load(f, map_location="cpu", weights_only=False) for f in files]
    merged = {}
    for key, first in shards[0].items():
        if not isinstance(first, DTensor):
            merged[key] = first if len(shards) == 1 else torch.cat([s[key] for s in shards])
            continue
        placement = first.placements[-1]  # the fsdp dimension (an hsdp mesh's first dimension replicates)
        locals_ = [s[key]._local_tensor for s in shards]
        merged[key] = torch.cat(locals_, dim=placement.dim) if placement.is_shard() else locals_[0]
    return merged


def merge(actor_dir: str | Path, out: str | Path | None = None, dtype: str | None = None) -> Path:
    """Write the merged model (and the checkpoint's config and processor files) to ``out`` (default
    ``actor_dir/huggingface``). Returns the folder."""
    import torch
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForImageTextToText,
    )

    actor_dir = Path(actor_dir)
    hf = actor_dir / "huggingface"
    if not (hf / "config.json").is_file():
        raise UsageError(f"{hf}/config.json not found: {actor_dir} is not an EasyR1 actor checkpoint folder")
    state = merged_state_dict(shard_files(actor_dir))
    config = AutoConfig.from_pretrained(hf)
    auto = (
        AutoModelForImageTextToText
        if type(config) in AutoModelForImageTextToText._model_mapping
        else AutoModelForCausalLM
    )
    with torch.device("meta"):
        model = auto.from_config(config)
    model.load_state_dict(state, assign=True, strict=True)
    model.tie_weights()  # assign= loads tied parameters apart; they hold equal values
    if dtype:
        model = model.to({"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype])
    target = Path(out) if out else hf
    target.mkdir(parents=True, exist_ok=True)
    if target.resolve() != hf.resolve():
        shutil.copytree(hf, target, dirs_exist_ok=True)
    model.save_pretrained(target)
    return target
