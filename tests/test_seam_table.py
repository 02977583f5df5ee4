"""A host's seam table declares each seam once: the table, its counts and ``named`` list it once."""

import pytest

from zoomzero_plugin.hosts.easyr1.seams import TABLE as EASYR1
from zoomzero_plugin.hosts.seams import Seam, SeamTable


def seam(name: str) -> Seam:
    return Seam(name=name, module="m", targets=("f",), params=(), wrap=lambda f: f, why="w", breaks="b")


def test_a_seam_declared_twice_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"^verl seam table: \['a'\] declared more than once$"):
        SeamTable("verl", "verl", "verl 0.9", "zoomzero verl doctor", (seam("a"), seam("b"), seam("a")))
    table = SeamTable("verl", "verl", "verl 0.9", "zoomzero verl doctor", (seam("a"), seam("b")))
    assert table.named("b") is table.seams[1]


def test_the_easyr1_table_declares_each_seam_once():
    names = [s.name for s in EASYR1.seams]
    assert names and len(names) == len(set(names))
