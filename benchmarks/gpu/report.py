"""The run's two outputs: ``gpu_benchmark.json`` (everything measured) and ``gpu_benchmark.md`` (one table of it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

JSON_NAME, MARKDOWN_NAME = "gpu_benchmark.json", "gpu_benchmark.md"
FITS_GIB = 79.6  # an 80 GB card's memory as PyTorch sees it (H100 80GB HBM3: 81,559 MiB)


def write(out: Path, result: dict[str, Any]) -> None:
    """Both files, rewritten whole (after every section: what was measured before a failure stays)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / JSON_NAME).write_text(json.dumps(result, indent=1) + "\n")
    (out / MARKDOWN_NAME).write_text(markdown(result))


def _n(value: Any, digits: int = 2, suffix: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}{suffix}"
    return f"{value:,}{suffix}"


def fits(entry: dict[str, Any]) -> str:
    """Whether a training step fits an 80 GB card: it ran and the allocator held at most :data:`FITS_GIB`."""
    if entry["status"] != "ok":
        return f"no ({entry['status']})"
    if entry["reserved_gib"] is None:
        return "–"
    return "yes" if entry["reserved_gib"] <= FITS_GIB else f"no ({entry['reserved_gib']:.1f} GiB held)"


def _model_rows(label: str, m: dict[str, Any]) -> list[str]:
    rows = []
    if "build" in m:
        b = m["build"]
        size = f"{b['parameters'] / 1e9:.2f} B" if b["parameters"] >= 1e8 else f"{b['parameters'] / 1e6:.2f} M"
        rows.append(
            f"| {label} | build (random {b['dtype']} weights, on the device) | {_n(b['seconds'])} s | | "
            f"{_n(b['peak_gib'])} | {size} parameters, {_n(b['weights_gib'])} GiB of weights |"
        )
    if "eval" in m:
        e = m["eval"]
        for mode, x in e["modes"].items():
            rows.append(
                f"| {label} | `zoomzero eval` {mode} (L_v {e['max_visual_tokens']:,}) | "
                f"{_n(x['seconds_per_question'])} s/q | {_n(x['x_one_stage'])}× | {_n(x['peak_gib'])} | "
                f"{_n(x['passes'], 1)} passes, "
                f"{_n(x['frames'], 0)} frames, {_n(x['video_tokens'], 0)} video tokens per q |"
            )
    if "agent" in m:
        a = m["agent"]
        rows.append(
            f"| {label} | agent (64-frame overview + {_n(a['calls'], 0)} calls × 16 frames) | "
            f"{_n(a['seconds_per_question'])} s/q | | {_n(a['peak_gib'])} | {_n(a['frames'], 0)} frames, "
            f"{_n(a['turns'], 0)} turns, last prompt {a['last_prompt_tokens']:,} tokens |"
        )
    for name, title in (("zoomzero", "Zoom-Zero sequence"), ("videozoomer", "VideoZoomer trajectory")):
        t = m.get("train", {}).get(name)
        if t is None:
            continue
        for key, how in (("checkpointing", "with"), ("no_checkpointing", "without")):
            x = t[key]
            rows.append(
                f"| {label} | actor fwd+bwd, {title}, {how} grad. checkpointing | {_n(x['seconds'])} s | | "
                f"{_n(x['peak_gib'])} | {t['tokens']:,} tokens ({t['visual_tokens']:,} visual, "
                f"{t['response_tokens']:,} response); fits 80 GB: {fits(x)} |"
            )
    return rows


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    head = (
        f"GPU benchmark, {result['date'][:10]}, {m['card']}"
        + (f" ({m['memory_gib']} GiB)" if m["memory_gib"] else "")
        + f"; torch {m['torch']}, transformers {m['transformers']}, Python {m['python']}; "
        + f"{result['elapsed_s']:.0f} s in all; load average {m['load_average'][0]}"
        + (" (--tiny: tiny models and sizes, not the real ones)" if result["tiny"] else "")
    )
    lines = [head, "", "| model | measurement | time | × one-stage | peak GiB | notes |", "|---|---|---|---|---|---|"]
    for label, entry in result["models"].items():
        lines += _model_rows(label, entry)
    adv = result.get("advantages")
    if adv:
        lines.append(
            f"| – | TokenAdv vs GRPO advantages, {adv['responses']} × {adv['tokens']:,} tokens | "
            f"{_n(adv['tokenadv_ms'])} ms vs {_n(adv['grpo_ms'])} ms | | {_n(adv['peak_gib'])} | "
            f"TokenAdv / GRPO {_n(adv['tokenadv_over_grpo'])}× (median of {adv['repeat']}) |"
        )
    for what in ("warnings", "skipped", "errors"):
        lines += [f"\n{what}: " + "; ".join(result[what])] if result[what] else []
    return "\n".join(lines) + "\n"
