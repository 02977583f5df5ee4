"""Whether this machine can train with the verl host: versions, the plugin's entry points, and every seam's state.

  zoomzero verl doctor

verl loads zoomzero-plugin by itself in every process that imports it (entry point ``verl.plugins``), and vLLM's own
processes load the host's vLLM part (``vllm.general_plugins``). This command imports verl as a run does, then each
seam's module, and prints one line per seam: ``patched`` (wrapped here, as in every process of a run), ``ready`` (a
CPU-mode seam, present and compatible; installed only by ``zoomzero verl train --cpu``), ``not needed`` (the installed
verl predates what it wraps), ``missing`` (the installed verl or vLLM lacks what the seam wraps, or its signature
changed: a run would stop on it, naming the seam), ``import failed``. Exit 0 when every seam is in place and vLLM is
installed; 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os

from .. import machine

ENTRY_POINTS = {  # group -> what loads it
    "verl.plugins": "verl, in every process that imports it",
    "vllm.general_plugins": "vLLM, in each of its processes: CPU mode's seams",
}
INSTALL = "bash scripts/install-cpu.sh --verl (a CPU environment of its own), or pip install verl==0.9.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: it reports on the environment it runs in."""


def _entry_points() -> list[tuple[str, str]]:
    """(group, what of zoomzero-plugin it names, or "NOT INSTALLED: …") for each group the host needs."""
    rows = []
    for group, loader in ENTRY_POINTS.items():
        named = importlib.metadata.entry_points(group=group)
        ours = [ep.value for ep in named if ep.value.startswith("zoomzero_plugin")]
        found = f"{', '.join(ours)} (loaded by {loader})" if ours else "NOT INSTALLED: reinstall zoomzero-plugin here"
        rows.append((group, found))
    return rows


def _verl() -> tuple[str, bool]:
    """(what to print, whether it is verl proper). EasyR1 installs a package of the same name, ``verl``."""
    dists = importlib.metadata.packages_distributions().get("verl", [])
    if not dists:
        return f"not installed: {INSTALL}", False
    found = f"{machine.version(dists[0])} ({dists[0]})"
    if dists[0] != "verl":
        return f"{found}: EasyR1's package of the same name, not verl; the verl host needs verl 0.9: {INSTALL}", False
    return found, True


def run(args: argparse.Namespace) -> int:
    machine.quiet_vllm_logs()
    from .seams import CPU_SEAMS, TABLE, VLLM_SEAMS

    verl, is_verl = _verl()
    vllm = machine.installed_vllm()
    rows = [
        ("verl", verl),
        ("vLLM", f"{vllm[1]} ({vllm[0]})" if vllm else "not installed: verl's rollout cannot generate here"),
        ("transformers", machine.version("transformers")),
        ("torch", machine.version("torch")),
        ("Ray", machine.version("ray")),
        ("GPUs", machine.gpus()),
        *_entry_points(),
    ]
    machine.print_rows(rows)
    print(f"the verl host supports {TABLE.supported}")
    if not is_verl:
        print("verl 0.9 is not installed here: nothing to check the seams against")
        return 1
    import verl as verl_package  # loads the verl.plugins entry points, as in every process of a run

    print(f"verl {verl_package.__version__} at {os.path.dirname(verl_package.__file__)}")
    cpu_only = {s.name for s in (*CPU_SEAMS, *VLLM_SEAMS)}  # installed in CPU mode only (vLLM's: in its processes)
    ok = all("NOT INSTALLED" not in value for _, value in rows)
    print("seams (verl and vLLM code the host wraps):")
    width = max(len(s.name) for s in TABLE.seams)
    for seam in TABLE.seams:
        state, detail, in_place = machine.seam_state(
            *TABLE.status(seam, import_modules=True),
            seam.targets,
            elsewhere=seam.name in cpu_only,
            note="installed only by zoomzero verl train --cpu",
        )
        ok &= in_place
        print(machine.seam_line(seam.name, state, detail, width))
    if not ok:
        print("something is not in place: a run with the plugin would stop (see above)")
    elif vllm is None:
        print("all seams in place, but vLLM is missing: `zoomzero verl train RECIPE --dry-run` works, training not")
    else:
        print("all seams in place: this machine can train with the verl host")
    return 0 if ok and vllm is not None else 1
