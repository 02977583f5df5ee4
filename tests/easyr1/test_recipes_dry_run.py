"""Every shipped recipe in yamls/ passes `easyr1 train RECIPE --dry-run` with its data and model pointed at
fixtures (synthetic rows, the tiny model): EasyR1's own config classes, the plugin checks, the first rows
and their videos."""

from pathlib import Path

import pytest

from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1.cli import main

from .conftest import REPO

# LLaMA-Factory recipes (top-level `stage:`, e.g. videozoomer_sft.yaml) are tested in tests/sft.
RECIPES = sorted(p for p in (REPO / "yamls").glob("*.yaml") if "\nstage:" not in p.read_text())


def test_every_recipe_is_covered():
    assert {p.stem for p in RECIPES} >= {
        "stage1",
        "stage2",
        "zoomzero",
        "zoomzero_qwen3vl",
        "small_gpu",
        "eval",
        "videozoomer",
        "videozoomer_small_gpu",
        "videozoomer_qwen3vl",
    }


@pytest.fixture(autouse=True)
def no_ray(monkeypatch):
    import ray

    monkeypatch.setattr(ray, "init", lambda *a, **k: pytest.fail("a dry run must not start Ray"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_passes_dry_run_on_fixtures(recipe: Path, benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
    ]
    code = main(["train", str(recipe), *overrides, "--dry-run"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "no Ray cluster was started" in out.out


def test_recipe_placeholders_are_reported_clearly(capsys):
    code = main(["train", str(REPO / "yamls" / "zoomzero.yaml"), "--dry-run"])
    out = capsys.readouterr()
    assert code != 0
    assert "data.train_files" in out.out + out.err and "not found" in out.out + out.err


@pytest.mark.parametrize("recipe", ["videozoomer", "videozoomer_small_gpu"])
def test_videozoomer_dry_run_prints_the_rollout_and_its_budgets(recipe, benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
    ]
    assert main(["train", str(REPO / "yamls" / f"{recipe}.yaml"), *overrides, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "Rollout: videozoomer (plugin" in out and "agent budgets" in out
    assert '"assistant turns": 5' in out and '"per call": "<= 16 frames"' in out
    assert "first prompt" in out and "overview frames x" in out


KWARGS = "worker.reward.reward_function_kwargs"
# The keys each section knows, typed here as the docs list them (a mistake's line names them all).
ZOOM_KEYS = (
    "['enable', 'fps', 'max_frame_pixels', 'max_frames', 'max_new_tokens', 'max_visual_tokens', 'min_clip_seconds', "
    "'min_frame_pixels', 'no_spans', 'prompt', 'uniform_frames']"
)
TOKENADV_KEYS = "['answer_components', 'eps', 'glue_components', 'over_turns', 'std']"
AGENT_KEYS = (
    "['clip_as', 'enable', 'frame_cache_mb', 'max_assistant_turns', 'max_calls', 'max_frame_pixels', "
    "'max_frames_per_call', 'max_images', 'max_new_tokens', 'max_overview_frames', 'max_response_tokens', "
    "'min_frame_pixels', 'overview_fps', 'prompt', 'sampling_logprobs', 'schedule']"
)
# (section, mistake kind, recipe, overrides, the one problem line). "old and new together": with no renames before
# the first release, an old name is an unknown key beside the known one, which is read as given.
MISTAKES = [
    (
        "zoom",
        "bad value",
        "zoomzero",
        ["zoom.max_visual_tokens=-5"],
        f"{KWARGS}.zoom: invalid zoom budget: max_visual_tokens must be > 0, got -5",
    ),
    ("zoom", "bad type", "zoomzero", ["zoom.fps=abc"], f"{KWARGS}.zoom.fps: 'abc' is not a valid float"),
    (
        "zoom",
        "unknown key",
        "zoomzero",
        ["zoom.max_visual_tokenz=8192"],
        f"{KWARGS}.zoom: unknown option(s) ['max_visual_tokenz']; known: {ZOOM_KEYS}",
    ),
    (
        "zoom",
        "old and new together",
        "zoomzero",
        ["zoom.max_tokens=4096", "zoom.max_visual_tokens=4096"],
        f"{KWARGS}.zoom: unknown option(s) ['max_tokens']; known: {ZOOM_KEYS}",
    ),
    ("tokenadv", "bad value", "zoomzero", ["tokenadv.eps=0"], f"{KWARGS}.tokenadv.eps must be > 0, got 0.0"),
    (
        "tokenadv",
        "unknown key",
        "zoomzero",
        ["tokenadv.epsilon=1e-6"],
        f"{KWARGS}.tokenadv: unknown option(s) ['epsilon']; known: {TOKENADV_KEYS}",
    ),
    (
        "tokenadv",
        "old and new together",
        "zoomzero",
        ["tokenadv.std_kind=sample", "tokenadv.std=sample"],
        f"{KWARGS}.tokenadv: unknown option(s) ['std_kind']; known: {TOKENADV_KEYS}",
    ),
    (
        "agent",
        "bad value",
        "videozoomer",
        ["agent.max_calls=-1"],
        f"{KWARGS}.agent: invalid agent budget: max_calls must be an integer >= 0, got -1",
    ),
    (
        "agent",
        "unknown key",
        "videozoomer",
        ["agent.max_callz=2"],
        f"{KWARGS}.agent: unknown option(s) ['max_callz']; known: {AGENT_KEYS}",
    ),
    (
        "agent",
        "old and new together",
        "videozoomer",
        ["agent.calls=2", "agent.max_calls=3"],
        f"{KWARGS}.agent: unknown option(s) ['calls']; known: {AGENT_KEYS}",
    ),
    (
        "reward",
        "bad value",
        "zoomzero",
        ["weights.zoom=-1"],
        f"{KWARGS}: reward weight zoom=-1 must be a finite number >= 0",
    ),
    (
        "reward",
        "unknown key",
        "zoomzero",
        ["weights.zooom=1.0"],
        f"{KWARGS}: unknown reward components ['zooom']; known: ['format', 'iou', 'accuracy', 'zoom']",
    ),
    (
        "reward",
        "old and new together",
        "videozoomer",
        ["weights.acc=0.9", "weights.accuracy=0.9"],
        f"{KWARGS}: unknown reward weight(s) ['acc']; known: ['accuracy', 'format', 'tool', 'looked']",
    ),
]


@pytest.mark.parametrize(
    "section, kind, recipe, mistake, line", MISTAKES, ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_sections_mistake_is_one_collected_line(
    section, kind, recipe, mistake, line, benchmark_rows, easyr1_model_dir, capsys
):
    """Each kind of mistake in each of the plugin's sections (zoom, tokenadv, agent, the reward's own kwargs): the
    dry run prints its settings, then one problem line naming the key (and the known keys), exit 2, no traceback."""
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        *(f"{KWARGS}.{m}" for m in mistake),
    ]
    code = main(["train", str(REPO / "yamls" / f"{recipe}.yaml"), *overrides, "--dry-run"])
    out, err = capsys.readouterr()
    assert code == EXIT_USER, out + err
    head, *problems = err.strip().splitlines()
    assert head == f"easyr1 train: 1 problem(s) with the EasyR1 config {REPO / 'yamls' / f'{recipe}.yaml'}:"
    assert problems == [f"  - [zoomzero] {line}"]
    assert (out + err).count(line) == 1 and "Traceback" not in out + err
    assert "not shown" in out and "dry run: the recipe is valid" not in out


ISSUE_COMMANDS = [  # the agent section's mistakes as a new user typed them (EasyR1 v0.3.2)
    ["agent.max_calls=-1"],
    ["agent.max_callz=2"],
    ["agent.calls=2", "agent.max_calls=3"],
]


@pytest.mark.parametrize("mistake", ISSUE_COMMANDS, ids=["bad-value", "unknown-key", "old-and-new"])
def test_the_agent_sections_mistakes_exit_2_from_the_console_script(mistake, tmp_path):
    """`easyr1 train yamls/videozoomer.yaml --dry-run KEY=VALUE` as typed (placeholders left: their notes and
    problems are listed too): the agent's mistake is one of the listed lines, exit 2, and no traceback."""
    import subprocess
    import sys

    from .conftest import subprocess_env

    script = Path(sys.executable).with_name("easyr1")
    command = [str(script), "train", "yamls/videozoomer.yaml", "--dry-run", *(f"{KWARGS}.{m}" for m in mistake)]
    env = subprocess_env(HF_HUB_OFFLINE="1")
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == EXIT_USER, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    lines = [x for x in done.stderr.splitlines() if x.startswith("  - [zoomzero] ")]
    assert len(lines) == 1 and lines[0].startswith(f"  - [zoomzero] {KWARGS}.agent: "), done.stderr


def test_videozoomer_checks_stop_what_cannot_train(benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        "data.max_prompt_length=200",
        "worker.reward.reward_function_kwargs.agent.max_response_tokens=40000",
        "worker.rollout.limit_images=8",
        "worker.reward.reward_function=zoomzero:gvqa",
        "algorithm.adv_estimator=remax",
    ]
    assert main(["train", str(REPO / "yamls" / "videozoomer.yaml"), *overrides, "--dry-run"]) == EXIT_USER
    err = capsys.readouterr().err
    for expected in (
        "score it with worker.reward.reward_function: zoomzero:videozoomer",
        "remax",
        "agent.max_response_tokens=40000 exceeds data.max_response_length=32768",
        "limit_images=8 is below",
    ):
        assert expected in err, err


def test_videozoomer_dry_run_measures_the_agents_first_prompt(benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        "data.max_prompt_length=700",
    ]
    assert main(["train", str(REPO / "yamls" / "videozoomer.yaml"), *overrides, "--dry-run"]) == EXIT_USER
    err = capsys.readouterr().err
    # the 12 s synthetic videos: 6 overview frames (0.5 fps) of 224x168 = 48 tokens each, plus the system prompt
    assert "train row 0: the agent's first prompt is" in err and "(6 overview frames x 48 +" in err


def test_videozoomer_refuses_estimators_that_discount_along_the_mask(benchmark_rows, easyr1_model_dir, capsys):
    overrides = [
        f"data.train_files={benchmark_rows}",
        f"data.val_files={benchmark_rows}",
        f"worker.actor.model.model_path={easyr1_model_dir}",
        "algorithm.adv_estimator=reinforce_plus_plus",
    ]
    assert main(["train", str(REPO / "yamls" / "videozoomer.yaml"), *overrides, "--dry-run"]) == EXIT_USER
    assert "reinforce_plus_plus discounts returns along response_mask" in capsys.readouterr().err


def test_a_model_path_neither_here_nor_reachable_is_a_problem_at_once(tmp_path):
    """`easyr1 train yamls/videozoomer.yaml --dry-run` where checkpoints/videozoomer_sft (the SFT output) does not
    exist yet, on a machine without network and without HF_HUB_OFFLINE: the problem is said after one request to the
    Hub (once eleven retries, ~30 s). No real network: the endpoint is a local port that drops every connection."""
    import subprocess
    import sys

    from tests.helpers import no_network

    from .conftest import subprocess_env

    script = Path(sys.executable).with_name("easyr1")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "zoomzero_plugin.hosts.easyr1.cli"]
    recipe = REPO / "yamls" / "videozoomer.yaml"
    with no_network() as (endpoint, connections):
        env = subprocess_env(
            drop=("RAY_RUNTIME_ENV_HOOK", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"),
            HF_ENDPOINT=endpoint,
            HF_HOME=str(tmp_path / "hf-home"),  # an empty cache
            RAY_ADDRESS="127.0.0.1:1",  # a dry run never connects to a cluster
        )
        done = subprocess.run(
            [*command, "train", str(recipe), "--dry-run"], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        asked = connections()
    assert done.returncode == EXIT_USER, done.stdout[-3000:] + done.stderr[-3000:]
    assert (
        "  - worker.actor.model.model_path checkpoints/videozoomer_sft: no such folder, and the Hugging Face Hub "
        f"({endpoint}) cannot be reached (no connection); without network, pass a local model folder"
    ) in done.stderr.splitlines()
    assert asked == 1 and "Retrying" not in done.stdout + done.stderr  # one request, no retry
