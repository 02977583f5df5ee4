"""``zoomzero verl doctor`` where verl 0.9 is not installed: one line says so and how to install it, exit 1, and no seam
is imported (EasyR1 installs a package of the same name, ``verl``, which the host cannot use)."""

from __future__ import annotations

import importlib.metadata
import re
import sys

import pytest

from zoomzero_plugin.commands.cli import main


@pytest.fixture
def verl_from(monkeypatch):
    def install(dists: list[str]) -> None:
        found = {k: v for k, v in importlib.metadata.packages_distributions().items() if k != "verl"}
        monkeypatch.setattr(importlib.metadata, "packages_distributions", lambda: {**found, **{"verl": dists}})
        monkeypatch.setattr(importlib.metadata, "version", lambda dist: {"lazyllm-verl": "0.3.2.dev2"}.get(dist, "1.0"))

    return install


def test_easyrs_package_of_the_same_name_is_not_verl(verl_from, capsys):
    verl_from(["lazyllm-verl"])
    already = "verl" in sys.modules
    assert main(["verl", "doctor"]) == 1
    out = capsys.readouterr().out
    row = next(x for x in out.splitlines() if x.startswith("verl "))
    assert "0.3.2.dev2 (lazyllm-verl): EasyR1's package of the same name, not verl" in row
    assert "bash scripts/install-cpu.sh --verl" in row
    assert "seams (" not in out and out.rstrip().endswith(
        "verl 0.9 is not installed here: nothing to check the seams against"
    )
    assert ("verl" in sys.modules) == already, "the doctor imported EasyR1's verl"


def test_no_verl_at_all(verl_from, capsys):
    verl_from([])
    assert main(["verl", "doctor"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^verl +not installed: bash scripts/install-cpu\.sh --verl", out, re.M)
