"""CPU mode: a recipe's whole training loop on CPU processes (``easyr1 train RECIPE --cpu``).

What it changes, and where:

- The recipe (:func:`switches`): settings only CUDA can serve are switched, one printed line each — flash-attn's
  padding-free path, dynamic batching (EasyR1 all-reduces its micro-batch count on a CUDA tensor), torch.compile,
  bf16 (fp32 everywhere, so vLLM's and the actor's log-probs agree), parameter offload and rank-0 init (both move
  tensors to CUDA), FSDP's CPU offload, vLLM's graph compilation and tensor parallelism. What has no CPU form
  (Ulysses sequence parallelism, several nodes) is refused (:func:`refusals`). ``easyr1 train --cpu`` passes the
  switches to EasyR1 as overrides; under ``python3 -m verl.trainer.main`` each FSDP worker applies them itself.
- Ray (:func:`ray_resources`): a local Ray is told it has the GPUs the recipe asks for (``RAY_OVERRIDE_RESOURCES``,
  read when ``ray.init`` starts the node), so EasyR1's resource check and placement groups are satisfied and each
  "GPU" is one CPU worker process; and enough logical CPUs for the Runner and the reward actors.
- EasyR1's modules (:mod:`.cpu_seams`, declared like every seam and listed by ``easyr1 doctor``): gloo instead of
  NCCL, CPU device meshes, CPU answers to ``torch.cuda`` inside EasyR1's modules only, SDPA attention.

Asked for with ``EASYR1_PLUGINS_CPU=1`` (``--cpu`` sets it): the seams are installed in a process only then, so a
GPU machine that does not ask runs exactly as before.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..switches import FP32, Switch, flag

CPU_ENV = "EASYR1_PLUGINS_CPU"  # "1": CPU mode in every process of the job
RESOURCES_ENV = "RAY_OVERRIDE_RESOURCES"  # Ray reads it when ray.init starts a local node
KV_CACHE_ENV = "VLLM_CPU_KVCACHE_SPACE"  # GiB of KV cache vLLM's CPU engine reserves (its default is 4)
KV_CACHE_GIB = "1"


def requested() -> bool:
    """Whether this process runs in CPU mode (``EASYR1_PLUGINS_CPU=1``; unset, empty, 0, false, no or off: not)."""
    return flag(CPU_ENV)


def switches(worker: Any) -> list[Switch]:
    """What CPU mode changes in EasyR1's ``WorkerConfig`` (``config.worker``), in recipe order."""
    found: list[Switch] = []

    def want(key: str, owner: Any, attr: str, new: Any, why: str) -> None:
        old = getattr(owner, attr)
        if old != new:
            found.append(Switch(f"worker.{key}.{attr}", old, new, why))

    actor = worker.actor
    want("actor", actor, "padding_free", False, "flash-attn's padding-free path needs CUDA")
    want("actor", actor, "dynamic_batching", False, "EasyR1 all-reduces the micro-batch count on a CUDA tensor")
    want("actor", actor, "use_torch_compile", False, "compiling for the CPU costs more than it saves in a short run")
    for role in ("actor", "ref"):
        fsdp, offload = getattr(worker, role).fsdp, getattr(worker, role).offload
        want(f"{role}.fsdp", fsdp, "enable_rank0_init", False, "FSDP's sync_module_states needs GPU parameters")
        want(f"{role}.fsdp", fsdp, "enable_cpu_offload", False, "the parameters already live in CPU memory")
        want(f"{role}.fsdp", fsdp, "torch_dtype", "fp32", FP32)
        want(f"{role}.fsdp", fsdp, "mp_param_dtype", "fp32", FP32)
        want(f"{role}.offload", offload, "offload_params", False, "offloading moves parameters back with .to('cuda')")
        if role == "actor":
            want("actor.offload", offload, "offload_optimizer", False, "offloading moves state back with .to('cuda')")
    rollout = worker.rollout
    want("rollout", rollout, "dtype", "fp32", FP32)
    want("rollout", rollout, "enforce_eager", True, "compiling vLLM's model for the CPU takes ~25 s per start")
    want("rollout", rollout, "tensor_parallel_size", 1, "vLLM's CPU engine here runs one engine per worker")
    return found


def refusals(worker: Any, nnodes: int = 1) -> list[str]:
    """Settings CPU mode cannot run (one sentence each, naming the key); empty when it can. ``worker`` is the
    ``WorkerConfig``, ``nnodes`` the recipe's ``trainer.nnodes``."""
    problems = []
    if worker.actor.ulysses_size > 1:
        problems.append(
            f"worker.actor.ulysses_size is {worker.actor.ulysses_size}: Ulysses sequence parallelism "
            "needs all-to-all, which gloo (the CPU process group) lacks; set it to 1 for --cpu"
        )
    if nnodes > 1:
        problems.append(f"trainer.nnodes is {nnodes}: --cpu runs on this machine only; set it to 1")
    return problems


def apply(worker: Any) -> list[Switch]:
    """Apply :func:`switches` to a built ``WorkerConfig`` in place (the ref's copies of the actor's settings too,
    which EasyR1's ``post_init`` made); returns what changed."""
    done = switches(worker)
    for switch in done:
        *path, attr = switch.key.split(".")[1:]
        owner = worker
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, attr, switch.new)
    for attr in ("padding_free", "dynamic_batching", "use_torch_compile"):
        setattr(worker.ref, attr, getattr(worker.actor, attr))
    return done


def ray_resources(config: Any) -> dict[str, float]:
    """The resources a local Ray must declare: one "GPU" per worker process the recipe asks for, and CPUs for
    the workers' bundles, the Runner and the two reward actors (at least the machine's own count)."""
    gpus = int(config.trainer.n_gpus_per_node) * int(config.trainer.nnodes)
    needed = gpus + 1 + 2 * float(config.worker.reward.num_cpus)
    return {"GPU": float(gpus), "CPU": float(max(os.cpu_count() or 1, needed))}


def job_env() -> dict[str, str]:
    """Environment variables every process of a CPU-mode job needs (a value the user exported wins)."""
    return {CPU_ENV: "1", KV_CACHE_ENV: os.environ.get(KV_CACHE_ENV, KV_CACHE_GIB)}


def prepare_driver(config: Any) -> list[str]:
    """In the driver, before ``ray.init``: declare the recipe's GPUs to the local Ray about to start. Returns notes."""
    resources = ray_resources(config)
    if RESOURCES_ENV in os.environ:
        return [
            (
                f"{RESOURCES_ENV}={os.environ[RESOURCES_ENV]} from your environment (CPU mode would declare "
                f"{json.dumps(resources)})"
            )
        ]
    os.environ[RESOURCES_ENV] = json.dumps(resources)
    note = (
        f"cpu mode: the local Ray declares {int(resources['GPU'])} GPU(s), each one CPU worker process "
        f"({RESOURCES_ENV}={os.environ[RESOURCES_ENV]})"
    )
    return [note]
