"""``easyr1 doctor`` where vLLM is installed (marker ``vllm``): its report is not interleaved with vLLM's log lines."""

from __future__ import annotations

from tests.helpers import doctor_as_a_user_runs_it


def test_the_report_is_not_interleaved_with_vllms_log_lines():
    """Run as a user runs it (a fresh process, no VLLM_LOGGING_LEVEL): vLLM 0.11 logs INFO lines on stdout as the
    seams' modules import (4 of them before the fix); the report's stdout holds none of them."""
    lines, log_lines = doctor_as_a_user_runs_it("zoomzero_plugin.hosts.easyr1.cli", "doctor")
    assert lines[0].startswith("EasyR1 (verl) ")
    assert lines[-1] == "all seams in place: this machine can train with the plugins"
    assert not log_lines
