"""A wheel built from this repository is complete: installed into a fresh venv outside the clone, every shipped recipe
passes `easyr1 train yamls/NAME.yaml --dry-run` from an empty directory, and `zoomzero recipes` copies them out.

Cheap by design: the wheel is built from a copy of the sources without build isolation, and installed with
`--no-deps` into a venv whose only other packages are this test venv's (a .pth line), so nothing is downloaded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from .conftest import REPO, subprocess_env

SKIP = shutil.ignore_patterns(
    ".git",
    ".venv*",
    ".ci",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    "runs",
    "zoomzero-demo",
)
RECIPES = sorted(p.name for p in (REPO / "yamls").glob("*.yaml"))  # EasyR1's and LLaMA-Factory's (`stage:`)
EASYR1_RECIPES = [r for r in RECIPES if "\nstage:" not in (REPO / "yamls" / r).read_text()]
EXAMPLES = sorted(p.name for p in (REPO / "examples").glob("*.sh"))


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, command))}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def copy_sources(dest: Path) -> None:
    """The clone's files as git sees them (tracked, or new and not ignored): never a stale build/, and never a venv
    that CI is still installing beside the tests (.venv-vllm is several GB). Without git, by name."""
    git = shutil.which("git")
    listed = git and subprocess.run(
        [git, "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
    )
    if not listed or listed.returncode != 0:
        shutil.copytree(REPO, dest, ignore=SKIP)
        return
    for name in filter(None, listed.stdout.split("\0")):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source") / "zoomzero-plugin"
    copy_sources(source)
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)])
    (path,) = dist.glob("zoomzero_plugin-*.whl")
    return path


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding only the wheel; every dependency comes from this test venv through a .pth line."""
    root = tmp_path_factory.mktemp("venv") / "v"
    run([sys.executable, "-m", "venv", "--without-pip", str(root)])
    python = root / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "_test_venv_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # without PYTHONPATH: a worktree on it holding an editable install's zoomzero_plugin.egg-info makes pip take the
    # wheel for installed already, and install nothing
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)], env=clean)
    return root


def env(venv: Path) -> dict[str, str]:
    """The fresh venv first on PATH; no vLLM stand-in on any path (the launcher brings its own); no PYTHONPATH (a
    worktree on it would shadow the wheel's copy)."""
    return subprocess_env(
        drop=("RAY_RUNTIME_ENV_HOOK", "VIRTUAL_ENV", "PYTHONPATH"),
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    )


def test_the_wheel_holds_every_recipe_and_example(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"zoomzero_plugin/yamls/{r}" for r in RECIPES} <= names
    assert {f"zoomzero_plugin/examples/{e}" for e in EXAMPLES} <= names
    assert "zoomzero_plugin/hosts/easyr1/zoomzero/plugin.py" in names


def test_every_shipped_recipe_dry_runs_from_an_empty_directory(venv, tmp_path, benchmark_rows, easyr1_model_dir):
    empty = tmp_path / "empty"
    empty.mkdir()
    where = run(
        [str(venv / "bin" / "python"), "-c", "import zoomzero_plugin; print(zoomzero_plugin.__file__)"],
        cwd=empty,
        env=env(venv),
    ).stdout
    assert where.startswith(str(venv)), where  # the wheel's copy, not the clone
    fixtures = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
    ]
    first, *others = EASYR1_RECIPES
    done = run(
        [str(venv / "bin" / "easyr1"), "train", f"yamls/{first}", *fixtures, "--dry-run"], cwd=empty, env=env(venv)
    )
    assert f"yamls/{first} is not in {empty}: using the recipe shipped with zoomzero-plugin" in done.stdout
    assert "dry run: the recipe is valid" in done.stdout
    script = (
        "import sys\nfrom zoomzero_plugin.hosts.easyr1.cli import main\n"
        "codes = [main(['train', f'yamls/{r}', *sys.argv[2:], '--dry-run']) for r in sys.argv[1].split(',')]\n"
        "sys.exit(max(codes))"
    )
    done = run([str(venv / "bin" / "python"), "-c", script, ",".join(others), *fixtures], cwd=empty, env=env(venv))
    assert done.stdout.count("using the recipe shipped with zoomzero-plugin") == len(others)
    assert done.stdout.count("dry run: the recipe is valid") == len(others)
    assert list(empty.iterdir()) == []  # a dry run writes nothing


def test_zoomzero_recipes_copies_them_out_for_editing(venv, tmp_path):
    run([str(venv / "bin" / "zoomzero"), "recipes", "copy", "all"], cwd=tmp_path, env=env(venv))
    assert sorted(p.name for p in (tmp_path / "yamls").iterdir()) == RECIPES
    assert sorted(p.name for p in (tmp_path / "examples").iterdir()) == EXAMPLES  # helpers travel with their scripts
    assert (tmp_path / "yamls" / "zoomzero.yaml").read_bytes() == (REPO / "yamls" / "zoomzero.yaml").read_bytes()
