"""The GPU check: real-size time and memory of the zoom modes, the agent, an actor step and TokenAdv, in one go.

On one H100 80 GB or H200 (Python 3.12, PyTorch 2.11 CUDA 13; planned for ~5 minutes; sections not started within
``budget_s`` = 360 s, the install counted, are skipped and listed), for a Qwen2.5-VL-7B-shaped and a
Qwen3-VL-8B-shaped model with random bf16 weights built on the GPU from the public config values (``workload.py``;
no download):

1. building the model (seconds; parameters, weight memory);
2. ``zoomzero eval``'s modes on the transformers backend — one-stage, coarse-to-fine, divide-and-conquer — over
   synthetic 300-s videos at the paper's budget (L_v = 8,192 visual tokens, 1 fps, <= 256 frames; 256-s windows):
   seconds per question, × one-stage, peak GPU memory, frames and visual tokens per question;
3. the agent (64-frame overview + 4 calls × 16 frames, then the answer): seconds per question, peak memory;
4. one actor forward + backward, bf16, SDPA, with and without gradient checkpointing, over a Zoom-Zero training
   sequence (coarse pass at 16,384 visual tokens + 512 response tokens) and over a VideoZoomer trajectory at its
   budget (overview + 4 × 16 frames, ~4,000 tokens of thinking a turn): peak memory, time, whether it fits 80 GB;
5. TokenAdv vs GRPO advantages over 512 responses × 8,192 tokens on the GPU.

A random model writes no template: the words of every pass are scripted after the real backend has generated them
(``inference.py``), so each question costs the real work. With ``--tiny`` the same code runs on a CPU with the tiny
models and tiny sizes in seconds (the test suite runs it: ``tests/test_gpu_benchmark.py``). Outputs, in ``--out``:
``gpu_benchmark.json`` and ``gpu_benchmark.md`` (one table), rewritten after every section. Exit 0: all measured;
1: a section failed (its error is in both files); 2: sections were skipped for time.

What travels (``carry.py``; sizes of 27 Nov 2026; the working tree itself ~2.6 MiB):

    zoomzero_plugin-0.1.0-py3-none-any.whl                       0.44 MiB  this package, built from the tree
    transformers-4.57.6-py3-none-any.whl                        11.44 MiB  the package needs <5; the machine has 5.17
    huggingface_hub-0.36.2-py3-none-any.whl                      0.54 MiB  transformers 4.57 needs <1.0 (machine: 1.33)
    tokenizers-0.22.2-cp39-abi3-manylinux_2_17_x86_64…whl        3.12 MiB  transformers 4.57 needs <=0.23.0 (0.23.2)
    decord-0.6.0-py3-none-manylinux2010_x86_64.whl              12.97 MiB  the video reader
    qwen_vl_utils-0.0.14-py3-none-any.whl                        0.01 MiB  frame sampling and resizing
    videos/ (2 synthetic 300-s mp4, 448×252 @ 25 fps)             1.14 MiB  written here: the machine has no av
    total with the working tree (2.5 MiB)                       32.2 MiB of the 64 MiB limit

Prepare here (the test environment, with the registry), then give the device tool this command with
``carry: ["benchmarks/gpu/carry"]`` and ``timeout_s: 480`` (docs/gpu.md):

    python benchmarks/gpu/carry.py prepare
    set -o pipefail; PYTHONUNBUFFERED=1 python3 benchmarks/gpu/run.py --wheels benchmarks/gpu/carry/wheels \\
        --out $OUT 2>&1 | tee $OUT/log.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
SITE_ENV, START_ENV = "ZOOMZERO_GPU_SITE", "ZOOMZERO_GPU_START"  # set for the re-run: the site, the first start


def install_and_reexec(wheels: Path) -> None:
    """Install the carried wheels into a folder of their own (no index, no dependencies) and run this script again
    with that folder first on the path. Returns only when that was done already (in the re-run)."""
    if os.environ.get(SITE_ENV):
        return
    found = sorted(wheels.glob("*.whl"))
    if not found:
        raise SystemExit(f"run.py: no wheels in {wheels}; run `python benchmarks/gpu/carry.py prepare` and carry it")
    total = sum(w.stat().st_size for w in found) / 2**20
    print(f"installing {len(found)} carried wheels ({total:.2f} MiB): {', '.join(w.name for w in found)}")
    site = Path(tempfile.gettempdir()) / "zoomzero-gpu-site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--no-cache-dir"]
    subprocess.run([*pip, "--upgrade", "--target", str(site), *map(str, found)], check=True)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, **{SITE_ENV: str(site), START_ENV: os.environ[START_ENV]})
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]], env)


def machine(dev) -> dict:
    import torch
    import transformers

    return {
        "device": str(dev.device),
        "card": dev.name(),
        "memory_gib": dev.total_gib(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


class Run:
    """The result being built, saved after every section; sections past the time budget are skipped."""

    def __init__(self, out: Path, w, tiny: bool, dev):
        self.out, self.w, self.start = out, w, float(os.environ[START_ENV])  # the budget counts the install too
        workload = asdict(replace(w, models=()))
        workload["models"] = [{"label": m.label, "family": m.family} for m in w.models]
        self.result = {
            "schema": 1,
            "tiny": tiny,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(dev),
            "workload": workload,
            "advantages": None,
            "models": {m.label: {} for m in w.models},
            "warnings": [],
            "skipped": [],
            "errors": [],
            "elapsed_s": 0.0,
        }

    def section(self, name: str, fn):
        """``fn()``, or None when the time budget is spent or it fails (both recorded); the files are rewritten."""
        elapsed = time.time() - self.start
        value = None
        if elapsed > self.w.budget_s:
            self.result["skipped"].append(f"{name} (not started: {elapsed:.0f} s > budget {self.w.budget_s:.0f} s)")
        else:
            print(f"[{elapsed:6.1f} s] {name}", flush=True)
            try:
                value = fn()
            except Exception as e:  # noqa: BLE001 - one failed section must not lose the others
                import traceback

                traceback.print_exc()
                first = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
                self.result["errors"].append(f"{name}: {type(e).__name__}: {first}")
        self.save()
        return value

    def save(self) -> None:
        from report import write

        self.result["elapsed_s"] = round(time.time() - self.start, 1)
        write(self.out, self.result)


def advantages_section(w, dev) -> dict:
    """TokenAdv (4 components) and GRPO on the summed reward over ``adv_responses`` × ``adv_tokens`` on the device."""
    import numpy as np
    import torch
    from _timing import median_ms

    from zoomzero_plugin.gvqa.advantages import grpo_advantage, token_adv

    bs, length, g = w.adv_responses, w.adv_tokens, torch.Generator().manual_seed(0)
    comps = {k: torch.randint(0, 2, (bs,), generator=g).float() for k in ("format", "accuracy", "zoom")}
    comps["iou"] = torch.rand(bs, generator=g)
    comps = {k: v.to(dev.device) for k, v in comps.items()}
    glue = (torch.rand(bs, length, generator=g) < 0.1).to(dev.device)
    mask = torch.ones(bs, length, device=dev.device)
    index = np.array([f"uid-{i // w.adv_group}" for i in range(bs)], dtype=object)
    overall = sum(comps.values()) / len(comps)

    def synced(fn):
        return lambda: (fn(), dev.sync())

    # rounded first, so that the ratio is the one the reported milliseconds give
    t_tokenadv = round(median_ms(synced(lambda: token_adv(comps, glue, mask, index)), w.adv_repeat), 3)
    t_grpo = round(median_ms(synced(lambda: grpo_advantage(overall, mask, index)), w.adv_repeat), 3)
    _, (adv, _) = dev.timed(lambda: token_adv(comps, glue, mask, index))
    return {
        "responses": bs,
        "tokens": length,
        "group": w.adv_group,
        "repeat": w.adv_repeat,
        "tokenadv_ms": t_tokenadv,
        "grpo_ms": t_grpo,
        "tokenadv_over_grpo": round(t_tokenadv / t_grpo, 2) if t_grpo else None,
        "peak_gib": dev.peak_gib(),
        "shape": list(adv.shape),
    }


def videos(w, folder: Path) -> list[dict]:
    """The synthetic questions' rows; their videos are written only where missing (``av``), else a clear error."""
    from bench_inference import long_benchmark

    from zoomzero_plugin.rows import read_rows

    try:
        path = long_benchmark(folder, w.questions, w.seconds, w.width, w.height, w.fps, w.clue_seconds)
    except ImportError as e:
        raise SystemExit(
            f"run.py: the synthetic videos are not in {folder} and this machine cannot write them ({e}); run "
            "`python benchmarks/gpu/carry.py prepare` where the package is installed and carry benchmarks/gpu/carry"
        ) from None
    return read_rows(path)


def run_models(run: Run, rows: list[dict], w, dev) -> None:
    from inference import agent_section, eval_section, load
    from training import train_section

    for model in w.models:
        entry = run.result["models"][model.label]
        loaded = run.section(f"{model.label}: build", lambda m=model: load(m, w, dev))
        if loaded is None:
            continue
        backend, entry["build"] = loaded
        for name, fn in (("eval", eval_section), ("agent", agent_section), ("train", train_section)):
            value = run.section(f"{model.label}: {name}", lambda f=fn, b=backend: f(b, rows, w, dev))
            if value is not None:
                entry[name] = value
            dev.free()
        run.save()
        del backend, loaded
        dev.free()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for gpu_benchmark.json and gpu_benchmark.md")
    parser.add_argument("--tiny", action="store_true", help="tiny models and sizes on the CPU (seconds)")
    parser.add_argument("--wheels", help="install these carried wheels first (the GPU machine; see carry.py)")
    parser.add_argument("--videos", help="folder of the synthetic videos (default: carry/videos; --tiny: OUT/videos)")
    parser.add_argument("--budget-s", type=float, help="seconds after which no section starts (default 360)")
    args = parser.parse_args(argv)
    os.environ.setdefault(START_ENV, str(time.time()))
    if args.wheels:
        install_and_reexec(Path(args.wheels))
    os.environ.setdefault("FORCE_QWENVL_VIDEO_READER", "decord")
    # the CPU side (frame decoding, the processor): one thread on the shared CPU machine, every core beside a GPU
    os.environ.setdefault("OMP_NUM_THREADS", "1" if args.tiny else str(os.cpu_count()))
    sys.path[:0] = [str(HERE), str(HERE.parent)]  # this folder's modules; bench_inference and _timing
    from measure import Device
    from workload import GPU, TINY

    w = TINY if args.tiny else GPU
    if args.budget_s is not None:
        w = replace(w, budget_s=args.budget_s)
    out = Path(args.out)
    folder = Path(args.videos) if args.videos else (out / "videos" if args.tiny else HERE / "carry" / "videos")
    if w.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("run.py: no CUDA device here; on a CPU run it with --tiny")
    dev = Device(w.device)
    rows = videos(w, folder)
    run = Run(out, w, args.tiny, dev)
    if args.wheels:  # what ran is the carried wheel's code: say where it is not the tree's
        from carry import wheel_drift

        drift = wheel_drift(Path(args.wheels), HERE.parents[1])
        if drift:
            run.result["warnings"].append(
                f"the carried zoomzero_plugin wheel differs from the tree in {len(drift)} files: {', '.join(drift[:5])}"
            )
    run.result["advantages"] = run.section("advantages", lambda: advantages_section(w, dev))
    run_models(run, rows, w, dev)
    run.save()
    print((out / "gpu_benchmark.md").read_text())
    if run.result["errors"]:
        return 1
    return 2 if run.result["skipped"] else 0


if __name__ == "__main__":
    sys.exit(main())
