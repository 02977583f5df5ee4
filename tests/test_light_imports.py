"""Start-up stays light: the package (imported by the CPU venv's start-up hook in every process) and the ``easyr1``
CLI module import no torch, EasyR1 or parser module until a name or a command needs one."""

import subprocess
import sys

import pytest

PROBE = "import sys, {module}; print(sorted(m for m in {heavy!r} if m in sys.modules))"


@pytest.mark.parametrize(
    "module, heavy",
    [
        (
            "zoomzero_plugin",
            ("torch", "zoomzero_plugin.gvqa.parsing", "zoomzero_plugin.gvqa.zoom", "zoomzero_plugin.gvqa.reward"),
        ),
        ("zoomzero_plugin.cpu_compat", ("torch", "zoomzero_plugin.ground_truth")),
        (
            "zoomzero_plugin.hosts.easyr1.cli",
            ("torch", "verl", "zoomzero_plugin.hosts.easyr1.activation", "zoomzero_plugin.hosts.easyr1.seams"),
        ),
    ],
)
def test_importing_loads_nothing_heavy(module, heavy):
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, heavy=heavy)], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_lazy_names_still_resolve():
    import zoomzero_plugin
    from zoomzero_plugin.hosts import easyr1

    assert all(getattr(zoomzero_plugin, name) is not None for name in zoomzero_plugin.__all__)
    assert all(getattr(easyr1, name) is not None for name in easyr1.__all__)
    with pytest.raises(AttributeError):
        zoomzero_plugin.no_such_name  # noqa: B018
