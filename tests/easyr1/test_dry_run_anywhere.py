"""`easyr1 train --dry-run` on any machine: no vLLM needed, EasyR1 missing named as such, and every recipe problem
reported in the problem list (one `easyr1 train:` message, exit 2), never as a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1.cli import main

from .conftest import subprocess_env


@pytest.fixture
def no_ray(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("a dry run must not start Ray"))


def dry_run(capsys, recipe, *overrides) -> tuple[int, str]:
    code = main(["train", str(recipe), *overrides, "--dry-run"])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.err


def edited(recipe_path, tmp_path, old: str, new: str):
    text = recipe_path.read_text()
    assert old in text
    path = tmp_path / "edited.yaml"
    path.write_text(text.replace(old, new, 1))
    return path, text.replace(old, new, 1).splitlines()


def test_yaml_syntax_error_names_file_line_and_column(recipe_path, tmp_path, capsys, no_ray):
    path, lines = edited(recipe_path, tmp_path, "  rollout_batch_size: 2\n", "  rollout_batch_size: [2\n")
    code, err = dry_run(capsys, path)
    line = next(i for i, text in enumerate(lines, 1) if "rollout_batch_size: [2" in text)
    column = lines[line].index(":") + 1  # the unclosed list runs into the next key: PyYAML stops at its colon
    assert code == EXIT_USER
    assert err.startswith(f"easyr1 train: {path}:{line + 1}:{column}: not valid YAML: expected ',' or ']'")
    assert "while parsing a flow sequence" in err


def test_an_unsafe_yaml_tag_is_named_and_never_run(recipe_path, tmp_path, capsys, no_ray):
    marker = tmp_path / "ran"
    path = tmp_path / "tagged.yaml"
    path.write_text(recipe_path.read_text() + f"extra: !!python/object/apply:os.system ['touch {marker}']\n")
    code, err = dry_run(capsys, path)
    last = len(recipe_path.read_text().splitlines()) + 1
    assert code == EXIT_USER and not marker.exists()
    assert f"{path}:{last}:8: the YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed" in err


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ["worker.reward.reward_function_kwargs.weights.format=abc"],
            "reward weight format='abc' must be a finite number >= 0",
        ),
        (["worker.reward.reward_function_kwargs.components=[format,speed]"], "speed"),
        (
            ["worker.reward.reward_function_kwargs.zoom.fps=fast"],
            "reward_function_kwargs.zoom.fps: 'fast' is not a valid float",
        ),
        (
            ["worker.reward.reward_function_kwargs.zoom.max_visual_tokens=1e400"],
            "reward_function_kwargs.zoom.max_visual_tokens",
        ),
        (["data.max_prompt_length=long"], "data.max_prompt_length"),
    ],
)
def test_bad_reward_weights_components_and_options_are_problems_not_tracebacks(
    recipe_path, capsys, no_ray, overrides, message
):
    code, err = dry_run(capsys, recipe_path, *overrides)
    assert code == EXIT_USER and err.startswith("easyr1 train: ") and message in err


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "stage: sft\nmodel_name_or_path: m\n",
            "is a LLaMA-Factory recipe (it has a top-level 'stage'), not an EasyR1 one: "
            "run it with `llamafactory-cli train ",
        ),
        ("- 1\n- 2\n", "the file holds a YAML list, not a mapping of EasyR1 sections"),
    ],
)
def test_a_recipe_that_is_not_an_easyr1_mapping_is_named(tmp_path, capsys, no_ray, text, message):
    path = tmp_path / "other.yaml"
    path.write_text(text)
    code, err = dry_run(capsys, path)
    assert code == EXIT_USER and err.startswith(f"easyr1 train: {path}") and message in err


DRY_RUN_WITHOUT = """
import sys
sys.modules[{module!r}] = None  # as if it were not installed
from zoomzero_plugin.hosts.easyr1.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_without(module: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", DRY_RUN_WITHOUT.format(module=module), *argv],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=180,
    )


def test_without_easyr1_the_launcher_says_easyr1_is_not_installed(recipe_path):
    done = run_without("verl", "train", str(recipe_path), "--dry-run")
    assert done.returncode == EXIT_USER, done.stderr
    assert done.stderr.startswith("easyr1 train: EasyR1 is not installed (no module 'verl')")
    assert "vllm" not in done.stderr.lower() and "Traceback" not in done.stderr
    doctor = run_without("verl", "doctor")
    assert doctor.returncode == 1 and "EasyR1 (verl)  not installed" in doctor.stdout


def test_blocked_plugins_are_named(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "zoomzero_plugin.hosts.easyr1.cli", "plugins"],
        capture_output=True,
        text=True,
        env=subprocess_env(EASYR1_PLUGINS_BLOCK="zoomzero"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no easyr1 plugins active (blocked by EASYR1_PLUGINS_BLOCK: zoomzero)"
