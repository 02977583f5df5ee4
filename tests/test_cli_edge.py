"""Every command line of the package goes through one edge (``errors.cli_edge``): a user's mistake is one line on
stderr with exit 2, and a reader that stops reading (``zoomzero … | head -1``) ends the command quietly (exit
141, no traceback). Module entry points (``python -m zoomzero_plugin.eval.runner``) are command lines too."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import zoomzero_plugin
from zoomzero_plugin.errors import EXIT_PIPE, EXIT_USER, UsageError, cli_edge

PACKAGE = Path(zoomzero_plugin.__file__).parent
ROOT = PACKAGE.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# module -> arguments that are a user's mistake, and the one line it must print
ENTRY_POINTS = {
    "zoomzero_plugin.commands.cli": (
        ["score", "/nonexistent.jsonl", "--benchmark", "rows", "--data", "x"],
        "zoomzero score: predictions file not found: /nonexistent.jsonl",
    ),
    "zoomzero_plugin.eval.runner": (
        ["--out", "/tmp/zz-out", "--benchmark", "rows"],
        "zoomzero eval: --model, --data required (or --demo)",
    ),
    "zoomzero_plugin.hosts.easyr1.cli": (
        ["train", "/nonexistent.yaml", "--dry-run"],
        "easyr1 train: recipe /nonexistent.yaml not found",
    ),
}


def _has_main_block(path: Path) -> bool:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test):
            return True
    return False


def test_every_module_entry_point_is_known():
    found = {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in PACKAGE.rglob("*.py") if _has_main_block(p)}
    assert found == set(ENTRY_POINTS), "a module runnable with python -m must be listed (and tested) here"


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_module_entry_points_print_one_line(module):
    argv, line = ENTRY_POINTS[module]
    done = subprocess.run(
        [sys.executable, "-m", module, *argv], capture_output=True, text=True, env=ENV, timeout=300, check=False
    )
    assert done.returncode == EXIT_USER
    assert done.stderr.startswith(line) and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(
    "argv, codes",
    [
        (["-m", "zoomzero_plugin.commands.cli", "recipes"], {EXIT_PIPE}),  # returns normally
        (["-m", "zoomzero_plugin.hosts.easyr1.cli", "runtime-env"], {EXIT_PIPE}),
        # argparse prints help and exits 0 itself; it ignores a failed write of its own (exit 0), and a failed flush
        # of what it left in the buffer ends here (141): which one depends on the help's length
        (["-m", "zoomzero_plugin.commands.cli", "eval", "--help"], {0, EXIT_PIPE}),
        (["-m", "zoomzero_plugin.eval.runner", "--help"], {0, EXIT_PIPE}),
        (["-m", "zoomzero_plugin.commands.cli", "--help"], {0, EXIT_PIPE}),
    ],
    ids=["recipes", "easyr1-runtime-env", "eval-help", "runner-help", "help"],
)
def test_a_reader_that_stops_reading_ends_the_command_quietly(argv, codes):
    # the pipe's only reader closes before the command writes (as `| head -1` does once it has its line)
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) in codes
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err


def test_a_broken_pipe_of_the_commands_own_keeps_its_traceback(capsys):
    def command():
        raise BrokenPipeError("a socket of the command's own")  # stdout is fine

    with pytest.raises(BrokenPipeError):
        cli_edge("zoomzero x", command)
    assert cli_edge(lambda: "zoomzero y", lambda: (_ for _ in ()).throw(UsageError("--z is wrong"))) == EXIT_USER
    assert capsys.readouterr().err == "zoomzero y: --z is wrong\n"
