"""CPU mode for verl: a recipe's whole training loop on CPU processes (``zoomzero verl train RECIPE --cpu``).

What it changes, and where:

- The platform: verl's own registry gets a ``cpu`` platform (:mod:`.cpu_platform`), chosen with ``VERL_PLATFORM=cpu``;
  verl's FSDP engines are registered for CUDA devices only, so ``VERL_ENGINE_DEVICE=cuda`` picks them (they run on
  whatever device the platform names: the CPU).
- The recipe (:func:`switches`): what only CUDA serves is switched, one printed line each: flash-attention (SDPA),
  padding-free (its varlen kernels), FSDP1 (``sync_module_states`` needs GPU parameters: FSDP2), bf16 (fp32 on both
  sides, so vLLM's and the actor's log-probs agree: the weights, and the FSDP engine's compute dtype
  ``fsdp_config.mixed_precision.param_dtype``, bf16 by default), torch.compile and vLLM graph capture (minutes on a
  CPU), vLLM's sleep mode (a CUDA allocator), its prefix cache and tensor parallelism, dataloader worker processes.
- Ray (:func:`ray_resources`): a local Ray is told it has one "GPU" per worker process the recipe asks for and
  enough logical CPUs for every actor verl starts (TransferQueue's controller and storage units, agent-loop and
  reward workers, the task runner), read when ``ray.init`` starts the node (``RAY_OVERRIDE_RESOURCES``). TransferQueue
  asks 1 CPU per storage unit and 8 units by default: on a small machine without this the run waits forever.
- verl's and vLLM's modules: the CPU seams of :mod:`.seams` (gloo, pinned memory, vLLM's packed linear weights).

``ZOOMZERO_VERL_CPU=1`` asks for it in every process (``--cpu`` sets it), so a GPU machine that does not ask runs
exactly as before.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..switches import FP32, Switch, flag

CPU_ENV = "ZOOMZERO_VERL_CPU"  # "1": CPU mode in every process of the job
RESOURCES_ENV = "RAY_OVERRIDE_RESOURCES"  # Ray reads it when ray.init starts a local node
KV_CACHE_ENV = "VLLM_CPU_KVCACHE_SPACE"  # GiB of KV cache vLLM's CPU engine reserves (its default is 4)


def requested() -> bool:
    """Whether this process runs in CPU mode (``ZOOMZERO_VERL_CPU=1``; unset, empty, 0, false, no or off: not)."""
    return flag(CPU_ENV)


# verl's FSDP engine computes in mixed_precision.param_dtype (bf16 when the recipe sets no mixed_precision: FSDP2's
# MixedPrecisionPolicy and an autocast around every forward); fsdp_config.dtype is not read by it
FP32_COMPUTE = "verl's FSDP engine computes in bf16 unless mixed_precision says otherwise; " + FP32
HYDRA_SET = "++"  # add the key or replace its value (verl's config lacks some, e.g. rollout.enable_sleep_mode)
ROLES = ("actor", "ref")
# (key under actor_rollout_ref, new value, why): the settings of every role, then the rollout's
ROLE_SWITCHES = (
    ("strategy", "fsdp2", "FSDP1's sync_module_states needs GPU parameters"),
    ("fsdp_config.strategy", "fsdp2", "FSDP1's sync_module_states needs GPU parameters"),
    ("fsdp_config.model_dtype", "fp32", FP32),
    ("fsdp_config.mixed_precision.param_dtype", "fp32", FP32_COMPUTE),
    ("fsdp_config.use_torch_compile", False, "compiling for the CPU costs more than it saves in a short run"),
    ("fsdp_config.param_offload", False, "the parameters already live in CPU memory"),
    ("fsdp_config.optimizer_offload", False, "the optimizer state already lives in CPU memory"),
    ("use_torch_compile", False, "compiling for the CPU costs more than it saves in a short run"),
)
SWITCHES = (
    ("actor_rollout_ref.model.override_config.attn_implementation", "sdpa", "flash-attention needs CUDA"),
    ("actor_rollout_ref.model.use_remove_padding", False, "padding-free runs flash-attention's varlen kernels"),
    ("actor_rollout_ref.actor.use_dynamic_bsz", False, "dynamic batching all-reduces on the accelerator"),
    ("actor_rollout_ref.rollout.dtype", "float32", FP32),
    ("actor_rollout_ref.rollout.enforce_eager", True, "capturing vLLM's graphs for the CPU takes minutes per start"),
    ("actor_rollout_ref.rollout.enable_sleep_mode", False, "vLLM's sleep mode is a CUDA memory allocator"),
    ("actor_rollout_ref.rollout.free_cache_engine", False, "without sleep mode the engine stays loaded"),
    ("actor_rollout_ref.rollout.enable_prefix_caching", False, "vLLM's CPU attention mixes prefix-cached blocks badly"),
    ("actor_rollout_ref.rollout.tensor_model_parallel_size", 1, "vLLM's CPU engine here runs one engine per worker"),
    ("actor_rollout_ref.rollout.load_format", "auto", "a dummy-loaded engine would need a full weight sync first"),
    ("data.dataloader_num_workers", 0, "dataloader worker processes fork a torch with threads (libgomp hangs)"),
    ("transfer_queue.backend.SimpleStorage.num_data_storage_units", 1, "each storage unit holds a Ray CPU"),
)


def _get(config: Any, key: str) -> Any:
    node = config
    for part in key.split("."):
        if node is None:
            return None
        try:
            node = node.get(part) if hasattr(node, "get") else getattr(node, part, None)
        except Exception:  # noqa: BLE001 - an interpolation that cannot resolve reads as absent
            return None
    return node


def switches(config: Any) -> list[Switch]:
    """What CPU mode changes in a composed verl config, in recipe order (only settings that differ)."""
    wanted = [(f"actor_rollout_ref.{role}.{key}", new, why) for role in ROLES for key, new, why in ROLE_SWITCHES]
    wanted += list(SWITCHES)
    found = []
    for key, new, why in wanted:
        old = _get(config, key)
        if old != new:
            found.append(Switch(key, old, new, why))
    return found


def refusals(config: Any) -> list[str]:
    """Settings CPU mode cannot run (one sentence each, naming the key); empty when it can."""
    problems = []
    ulysses = _get(config, "actor_rollout_ref.actor.ulysses_sequence_parallel_size") or 1
    if int(ulysses) > 1:
        problems.append(
            f"actor_rollout_ref.actor.ulysses_sequence_parallel_size is {ulysses}: Ulysses sequence parallelism "
            "needs all-to-all, which gloo (the CPU process group) lacks; set it to 1 for --cpu"
        )
    nnodes = int(_get(config, "trainer.nnodes") or 1)
    if nnodes > 1:
        problems.append(f"trainer.nnodes is {nnodes}: --cpu runs on this machine only; set it to 1")
    if _get(config, "actor_rollout_ref.rollout.name") not in (None, "vllm"):
        problems.append("actor_rollout_ref.rollout.name: --cpu runs vLLM's CPU build; set it to vllm")
    if os.environ.get("RAY_ADDRESS"):
        problems.append("RAY_ADDRESS is set: --cpu starts a local Ray with the resources the run needs; unset it")
    return problems


def ray_resources(config: Any) -> dict[str, float]:
    """The resources a local Ray must declare for this run: one "GPU" per worker process, and a CPU for every actor
    verl starts (task runner, TransferQueue controller and storage units, agent-loop and reward workers, worker
    bundles), at least the machine's own count."""
    gpus = int(_get(config, "trainer.n_gpus_per_node") or 1) * int(_get(config, "trainer.nnodes") or 1)
    storage = int(_get(config, "transfer_queue.backend.SimpleStorage.num_data_storage_units") or 1)
    agent_workers = int(_get(config, "actor_rollout_ref.rollout.agent.num_workers") or 1)
    reward_workers = int(_get(config, "reward.num_workers") or 1)
    needed = 1 + 1 + storage + agent_workers + reward_workers + gpus
    return {"GPU": float(gpus), "CPU": float(max(os.cpu_count() or 1, needed))}


def job_env(config: Any) -> dict[str, str]:
    """Environment variables of a CPU-mode job: for the driver, and through Ray to every process."""
    return {
        CPU_ENV: "1",
        "VERL_PLATFORM": "cpu",
        "VERL_ENGINE_DEVICE": "cuda",
        KV_CACHE_ENV: os.environ.get(KV_CACHE_ENV, "1"),
        RESOURCES_ENV: os.environ.get(RESOURCES_ENV) or json.dumps(ray_resources(config)),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "TOKENIZERS_PARALLELISM": "false",
    }


def lacking(config: Any, declared: str | None) -> list[str]:
    """Resources a user's ``RAY_OVERRIDE_RESOURCES`` lacks for this run (one line each; empty when enough)."""
    if not declared:
        return []
    try:
        have = json.loads(declared)
    except ValueError:
        return [f'{RESOURCES_ENV}={declared!r} is not JSON (e.g. \'{{"GPU": 1, "CPU": 8}}\')']
    out = []
    for name, need in ray_resources(config).items():
        if float(have.get(name, 0)) < need:
            out.append(
                f"{RESOURCES_ENV} declares {name}={have.get(name, 0)}, the run needs {need:g} (Ray would wait "
                f"forever for the rest): unset it, or declare at least {need:g}"
            )
    return out
