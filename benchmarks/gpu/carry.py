"""What travels with a GPU run, and the check that it fits: the wheels, the synthetic videos, the working tree.

The GPU machine (one H100 80 GB or H200; Python 3.12, PyTorch 2.11 CUDA 13, transformers 5.17, accelerate, peft,
pillow, numpy; no package registry) gets the working tree and the folders a run names in ``carry``, 64 MiB in all.
This package needs ``transformers>=4.54,<5``: the machine's 5.17 is outside that range, so a 4.x transformers
travels, with the ``huggingface-hub`` (<1.0; the machine has 1.33) and ``tokenizers`` (<=0.23.0; the machine has
0.23.2) it requires; its other requirements (filelock, numpy, packaging, pyyaml, regex, requests, safetensors, tqdm)
are there. The machine has no ``av``, which the package's synthetic video writer uses (its wheel alone is 40 MB):
``prepare`` writes the videos here with that writer, and they travel (0.6 MB each).

    python benchmarks/gpu/carry.py prepare   # download the wheels, build this package's, write the videos; check
    python benchmarks/gpu/carry.py check     # only the check: exit 1 when what travels is over 64 MiB

``prepare`` needs the test environment (the package, ``pip``, ``av``) and the package registry; it fills
``benchmarks/gpu/carry/`` (git-ignored): ``wheels/`` and ``videos/``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CARRY = ROOT / "benchmarks" / "gpu" / "carry"
WHEELS, VIDEOS = CARRY / "wheels", CARRY / "videos"
LIMIT_MIB = 64  # the device tool's limit on everything that travels, working tree included

# name, pinned version, why it travels (run.py's header lists the same, with the sizes measured on 27 Nov 2026)
PINNED = (
    ("transformers", "4.57.6", "this package needs >=4.54,<5; the machine has 5.17"),
    ("huggingface-hub", "0.36.2", "transformers 4.57 needs <1.0; the machine has 1.33"),
    ("tokenizers", "0.22.2", "transformers 4.57 needs <=0.23.0; the machine has 0.23.2"),
    ("decord", "0.6.0", "the video reader of qwen-vl-utils and of the agent's frame reader"),
    ("qwen-vl-utils", "0.0.14", "frame sampling and resizing (video_start / video_end)"),
)
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)


def download_command(dest: Path) -> list[str]:
    """``pip download`` of :data:`PINNED` for the GPU machine's Python (3.12, manylinux x86-64), no dependencies."""
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    pins = [f"{name}=={version}" for name, version, _ in PINNED]
    head = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    return head + ["--python-version", "3.12", "--implementation", "cp", *platforms, "-d", str(dest), *pins]


def tree_files(root: Path = ROOT) -> list[Path]:
    """The files of the working tree that travel: tracked, and untracked ones git does not ignore."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [root / name for name in out.split("\0") if name and (root / name).is_file()]


def folder_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def total_mib(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 2**20


def check(tree: list[Path], carried: dict[str, list[Path]], limit_mib: float = LIMIT_MIB) -> tuple[bool, list[str]]:
    """Whether the working tree and the carried folders together fit ``limit_mib``; the lines that say so."""
    lines = [f"working tree: {len(tree)} files, {total_mib(tree):.2f} MiB"]
    for name, files in carried.items():
        lines.append(f"{name}: {len(files)} files, {total_mib(files):.2f} MiB")
        lines += [f"  {f.name}  {f.stat().st_size / 2**20:.2f} MiB" for f in files if f.suffix == ".whl"]
    total = total_mib(tree) + sum(total_mib(files) for files in carried.values())
    fits = total <= limit_mib
    lines.append(f"total {total:.2f} MiB of {limit_mib} MiB: {'fits' if fits else 'OVER THE LIMIT'}")
    return fits, lines


def missing_wheels(folder: Path = WHEELS) -> list[str]:
    """Pinned wheels (and this package's) absent from ``folder``."""
    have = {p.name.split("-")[0].lower().replace("_", "-") for p in folder_files(folder)}
    wanted = [name for name, _, _ in PINNED] + ["zoomzero-plugin"]
    return [name for name in wanted if name not in have]


def wheel_drift(wheels: Path = WHEELS, root: Path = ROOT) -> list[str]:
    """This package's Python files whose text differs between the carried wheel and the tree, or that only one of them
    holds (a wheel built before the last change: run ``prepare`` again); ``["no zoomzero_plugin wheel"]`` without
    one."""
    found = sorted(wheels.glob("zoomzero_plugin-*.whl"))
    if not found:
        return ["no zoomzero_plugin wheel"]
    with zipfile.ZipFile(found[-1]) as wheel:
        packed = {n: wheel.read(n) for n in wheel.namelist() if n.startswith("zoomzero_plugin/") and n.endswith(".py")}
    tree = {p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "zoomzero_plugin").rglob("*.py")}
    return sorted(name for name in packed.keys() | tree.keys() if packed.get(name) != tree.get(name))


def prepare(videos: int, seconds: float, width: int, height: int, fps: int, clue: float) -> None:
    """Download the wheels, build this package's wheel, write the synthetic videos (the package's writer)."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    subprocess.run(download_command(WHEELS), check=True)
    for old in WHEELS.glob("zoomzero_plugin-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:  # built from a copy: no build/ or egg-info left in the checkout
        source = Path(tmp) / "zoomzero-plugin"
        for path in tree_files():
            (source / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / path.relative_to(ROOT))
        pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(WHEELS), str(source)]
        subprocess.run(pip_wheel, check=True)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_inference import long_benchmark

    long_benchmark(VIDEOS, videos, seconds, width, height, fps, clue)


def main(argv: list[str] | None = None) -> int:
    from workload import GPU

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("prepare", "check"))
    args = parser.parse_args(argv)
    if args.action == "prepare":
        prepare(GPU.questions, GPU.seconds, GPU.width, GPU.height, GPU.fps, GPU.clue_seconds)
    fits, lines = check(tree_files(), {"carry/wheels": folder_files(WHEELS), "carry/videos": folder_files(VIDEOS)})
    print("\n".join(lines))
    missing, drift = missing_wheels(), wheel_drift()
    if missing:
        print(f"missing wheels: {', '.join(missing)} (run: python benchmarks/gpu/carry.py prepare)")
    elif drift:
        print(f"the package wheel differs from the tree in {len(drift)} files ({', '.join(drift[:5])}): run prepare")
    return 0 if fits and not missing and not drift else 1


if __name__ == "__main__":
    sys.exit(main())
