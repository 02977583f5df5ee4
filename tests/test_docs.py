"""The documented commands, as a newcomer meets them: every shell command shown in README.md, docs/,
benchmarks/README.md and the example scripts' usage lines is either run here on CPU (as written, on fixture files
named as the docs name them) or covered by a named test, or listed with the reason it cannot run on this machine. A
new command in the docs that is none of these fails the suite, and so does a listed command no page shows any more
(a page moved out of sight of this test), so docs and code cannot drift apart silently. Also: every
`zoomzero`/`easyr1` command line parses with the real parsers, every `benchmarks/*.py` command names a script and
flags it has, links and anchors resolve, and the data guide's paths flow from step to step."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from zoomzero_plugin.commands import cli as zoomzero_cli
from zoomzero_plugin.errors import EXIT_USER
from zoomzero_plugin.hosts.easyr1 import cli as easyr1_cli, vllm_stub
from zoomzero_plugin.rows import write_rows

from .eval.conftest import cgbench_rows, nextgqa_rows

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "benchmarks").glob("*.md"))]
EXAMPLES = sorted((REPO / "examples").glob("*.sh"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`((?:zoomzero|easyr1) [a-z][^`]*)`")

# How each documented command is exercised: ("run", the test here) | ("covered", "tests/…py::test") |
# ("ci", what .ci/run runs of it) | ("not here", why it cannot run on a CPU machine without downloads).
# The first matching pattern decides.
HOW: list[tuple[str, str, str]] = [
    (
        r"^python3 -m venv \.venv && \. \.venv/bin/activate && bash scripts/install-cpu\.sh && zoomzero demo$",
        "covered",
        "tests/test_demo.py::test_the_readme_demo_prints_what_the_readme_shows",
    ),  # the install: .ci/run
    (
        r"^python3 -m venv \.venv-vllm && \. \.venv-vllm/bin/activate && "
        r"bash scripts/install-cpu\.sh --vllm && zoomzero demo --train$",
        "covered",
        "tests/vllm/test_demo_train.py::test_the_demo_prints_a_line_per_step_and_where_everything_is",
    ),  # the install: .ci/run
    (
        r"^python3 -m venv \.venv && \. \.venv/bin/activate && "
        r"bash scripts/install-cpu\.sh --test && python -m pytest$",
        "ci",
        "bash scripts/install-cpu.sh --test && python -m pytest",
    ),
    (
        r"^python3 -m venv \.venv-vllm && \. \.venv-vllm/bin/activate && "
        r"bash scripts/install-cpu\.sh --vllm && python -m pytest -m vllm",
        "ci",
        "install_env vllm --vllm",
    ),
    (
        r"^python3 -m venv \.venv-lmms && \. \.venv-lmms/bin/activate && bash scripts/install-cpu\.sh --lmms-eval && "
        r"python -m pytest -m lmms_eval",
        "ci",
        "install_env lmms --lmms-eval",
    ),
    (
        r"^zoomzero lmms-eval tasks \S+ --demo$",
        "covered",
        "tests/lmms_eval/test_lmms_eval.py::"
        "test_the_demo_tasks_command_runs_coarse_to_fine_through_the_cli_as_zoomzero_eval",
    ),
    (
        r"^zoomzero lmms-eval tasks \S+ --(nextgqa|rextime|cgbench) ",
        "not here",
        "needs converted benchmark rows and their videos "
        "(tests/integrations/test_lmms_eval_task.py writes tasks over rows)",
    ),
    (
        r"^lmms-eval --model zoomzero ",
        "not here",
        "needs a trained checkpoint (or the released VideoZoomer) and the benchmark's videos; tests/lmms_eval runs "
        "lmms-eval with the tiny model",
    ),
    (r"^bash scripts/install-cpu\.sh --verl$", "ci", "install_env verl --verl"),
    (
        r"^zoomzero verl doctor$",
        "covered",
        "tests/verl/test_doctor.py::test_every_seam_is_in_place_and_the_machine_can_train",
    ),
    (
        r"^zoomzero verl rows ",
        "covered",
        "tests/verl/test_cpu_mode.py::test_verl_rows_lay_the_packages_rows_out_for_verls_dataset",
    ),
    (
        r"^zoomzero verl train \S+\.yaml --dry-run$",
        "covered",
        "tests/verl/test_cpu_mode.py::test_the_shipped_recipes_pass_verls_own_checks_on_a_tiny_model",
    ),
    (
        r"^zoomzero verl train \S+\.yaml --cpu",
        "covered",
        "tests/verl/test_train.py::test_zoomzero_recipe_trains_whole_steps",
    ),
    (
        r"^python -m verl\.trainer\.main_ppo --config-path yamls/verl --config-name zoomzero",
        "covered",
        "tests/verl/test_ray_watch.py::test_a_ray_too_small_for_transferqueue_is_one_line_not_a_hang",
    ),
    (
        r"^zoomzero verl train \S+\.yaml( \S+=\S+)*$",
        "not here",
        "trains a 7B model on GPUs; the same launch with --cpu on the tiny model runs in tests/verl/test_train.py",
    ),
    (r"^easyr1 train \S+\.yaml .*--dry-run$", "run", "test_documented_dry_runs_run_as_written"),
    (r"^easyr1 train \S+\.yaml", "run", "test_documented_training_commands_stop_cleanly_without_a_gpu_node"),
    (
        r"^(export )?RAY_RUNTIME_ENV_HOOK=\S+( python3 -m verl\.trainer\.main .*)?$",
        "covered",
        "tests/easyr1/test_readme_launch.py::test_the_readme_launch_line_runs_on_cpu_up_to_the_gpu",
    ),
    (
        r"^python3 -m verl\.trainer\.main config=",
        "covered",
        "tests/easyr1/test_readme_launch.py::test_the_readme_launch_line_runs_on_cpu_up_to_the_gpu",
    ),
    (
        r"^ray job submit ",
        "covered",
        "tests/easyr1/test_ray_activation.py::test_ray_job_submit_with_the_runtime_env_json",
    ),
    (r"^ray start ", "not here", "starts a multi-node Ray cluster"),
    (r"^zoomzero score ", "run", "test_documented_score_commands_run_on_fixture_rows"),
    (r"^zoomzero eval --demo ", "run", "test_documented_cpu_evaluations_run"),
    (r"^bash examples/cpu_eval_demo\.sh$", "run", "test_documented_cpu_evaluations_run"),
    (
        r"^DATA=synthetic bash examples/eval_nextgqa\.sh",
        "covered",
        "tests/inference/test_examples.py::test_nextgqa_example_on_the_synthetic_benchmark",
    ),
    (
        r"^(MODEL=\S+ (DATA=\S+ )?|DATA=synthetic )bash examples/eval_(nextgqa|rextime|cgbench)\.sh",
        "covered",
        "tests/inference/test_examples.py::test_each_script_runs_the_evaluation_its_header_describes",
    ),
    (
        r"^(MODEL=\S+ .*|DATA=synthetic )bash examples/eval_long_video\.sh",
        "covered",
        "tests/inference/test_examples.py::test_long_video_script_runs_every_benchmark_in_both_modes",
    ),
    (
        r"^zoomzero (eval|data filter) .*--model (CKPT|checkpoints/)",
        "not here",
        "needs a trained checkpoint and converted benchmark rows (the tiny model runs both in tests/inference)",
    ),
    (
        r"^MODEL=zsgvivo/videozoomer ",
        "not here",
        "downloads the released VideoZoomer checkpoint; needs the benchmarks' rows",
    ),
    (r"^zoomzero demo --agent$", "covered", "tests/test_demo.py::test_demo_agent_runs_the_tool_loop"),
    (
        r"^DATA=synthetic bash examples/eval_videozoomer\.sh$",
        "covered",
        "tests/inference/test_examples.py::test_videozoomer_example_on_the_synthetic_benchmark",
    ),
    (
        r"^zoomzero eval .*--mode agent --model zsgvivo/videozoomer ",
        "not here",
        "downloads the released VideoZoomer checkpoint and needs LongVideoBench rows and videos",
    ),
    (
        r"^zoomzero data convert --from \S+ --input ",
        "not here",
        "needs the benchmark's downloaded annotation files (tests/data/test_convert.py converts copied samples)",
    ),
    (r"^zoomzero data check data/", "not here", "needs converted rows and their downloaded videos"),
    (
        r"^(mkdir -p data/|ln -s \.\./rows/|head -n \d+ data/eval/)",
        "not here",
        "the data guide's file housekeeping (its paths are checked: test_the_data_guide_paths_flow_from_step_to_step)",
    ),
    (r"^python3 scripts/model_merger\.py ", "not here", "EasyR1's own script, on a trained checkpoint"),
    (r"^\.venv/bin/python -m pytest tests/\S+\.py -q$", "ci", "python -m pytest"),  # a part of the suite CI runs
    (
        r"^\.venv-vllm/bin/python -m pytest -m vllm tests/vllm/test_train_cli\.py ",
        "ci",
        "test_env vllm vllm tests/vllm",
    ),
    (
        r"^\.venv-vllm/bin/python benchmarks/learning_curve\.py ",
        "not here",
        "the learning curve: ~1 h of training on 2 cores (a benchmark; tests/vllm/test_train_cli.py runs its launches)",
    ),
    (
        r"^easyr1 merge ",
        "covered",
        "tests/vllm/test_demo_train.py::test_each_update_changes_the_actor_and_merge_gives_a_model_zoomzero_eval_runs",
    ),
    (
        r"^zoomzero eval --benchmark rows --mode coarse-to-fine --model runs/cpu/model ",
        "covered",
        "tests/vllm/test_demo_train.py::test_each_update_changes_the_actor_and_merge_gives_a_model_zoomzero_eval_runs",
    ),
    (
        r"^zoomzero data export-sft .*--source teacher .*--teacher-url ",
        "not here",
        "needs a teacher model served at --teacher-url (tests/sft export from a scripted teacher served locally)",
    ),
    (
        r"^llamafactory-cli train yamls/videozoomer_sft\.yaml .*use_cpu=true",
        "covered",
        "tests/sft/test_llamafactory_train.py::test_the_documented_cpu_command_trains",
    ),
    (
        r"^(FORCE_TORCHRUN=1 )?llamafactory-cli train yamls/videozoomer_sft\.yaml",
        "not here",
        "full SFT of a 7B model on GPUs (tests/sft runs LLaMA-Factory's own trainer on the tiny model)",
    ),
    (
        r"^(FORCE_TORCHRUN=1 )?llamafactory-cli train yamls/videozoomer_sft_qwen3vl\.yaml",
        "not here",
        "full SFT of an 8B model on GPUs (tests/sft loads its samples with LLaMA-Factory's loader, tiny Qwen3-VL)",
    ),
    (
        r"^\.venv-vllm/bin/python benchmarks/learning_curve_videozoomer\.py ",
        "not here",
        "the VideoZoomer learning curve: ~1 h of warm starts and training on 2 cores (a benchmark; "
        "tests/vllm/test_train_cli.py runs the recipe's launch)",
    ),
    (r"^bash scripts/install-cpu\.sh --easyr1-main$", "ci", 'bash scripts/install-cpu.sh "$option"'),
    (
        r"^\.venv-vllm/bin/python -m pytest -m vllm --easyr1 main tests/vllm/",
        "ci",
        ".venv-vllm/bin/python -m pytest --easyr1 main",
    ),
    (
        r"^python benchmarks/gpu/carry\.py prepare$",
        "not here",
        "downloads wheels from the package registry (tests/test_gpu_benchmark.py checks the carry arithmetic)",
    ),
    (r"^python benchmarks/gpu/carry\.py check$", "covered", "tests/test_gpu_benchmark.py::test_carry_check_arithmetic"),
    (r"^python benchmarks/gpu/run\.py --tiny ", "covered", "tests/test_gpu_benchmark.py::test_structure"),
]


def strip_comment(line: str) -> str:
    """The line without a shell comment (a '#' that starts a word, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if ch in "'\"" and quote in (None, ch):
            quote = None if quote else ch
        elif ch == "#" and quote is None and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def page(path: Path) -> str:
    """A page's name in messages: its path in the repository (README.md and benchmarks/README.md are two pages)."""
    return path.relative_to(REPO).as_posix()


def documented() -> list[tuple[str, str]]:
    """(where, command) for every shell command in fenced bash blocks and the examples' usage lines."""
    out = []
    for path in DOCS:
        for match in FENCE.finditer(path.read_text(encoding="utf-8")):
            if match.group(1) in ("bash", "sh"):
                for line in match.group(2).replace("\\\n", " ").splitlines():
                    if command := " ".join(strip_comment(line).split()):
                        out.append((page(path), command))
    for path in EXAMPLES:
        header = "\n".join(t[1:] for t in path.read_text(encoding="utf-8").splitlines() if t.startswith("#   "))
        for line in header.replace("\\\n", " ").splitlines():
            if "bash examples/" in line:
                out.append(
                    (page(path), " ".join(strip_comment(line).replace("[extra zoomzero eval flags]", "").split()))
                )
    return out


COMMANDS = documented()


def how(command: str) -> tuple[str, str]:
    return next(((kind, detail) for pattern, kind, detail in HOW if re.search(pattern, command)), ("?", ""))


def test_every_documented_command_is_run_covered_or_explained():
    unexplained = [f"{where}: {command}" for where, command in COMMANDS if how(command)[0] == "?"]
    assert len(COMMANDS) > 40 and unexplained == [], "add these to HOW in tests/test_docs.py:\n" + "\n".join(
        unexplained
    )


def test_every_listed_command_is_still_shown_somewhere():
    """A command that moves between pages stays checked: an entry of HOW that no documented command matches any more
    means its page dropped out of DOCS (or the command was deleted: then delete the entry too)."""
    unmatched = [pattern for pattern, _, _ in HOW if not any(re.search(pattern, c) for _, c in COMMANDS)]
    assert unmatched == []


def test_the_tests_named_as_covering_commands_exist():
    here = Path(__file__).read_text(encoding="utf-8")
    for _, kind, detail in HOW:
        if kind == "covered":
            path, name = detail.split("::")
            assert f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), detail
        elif kind == "run":
            assert f"def {detail}(" in here, detail
        elif kind == "ci":
            assert detail in (REPO / ".ci" / "run").read_text(encoding="utf-8"), detail


def parse(command: str) -> None:
    """Parse a `zoomzero …` / `easyr1 …` line with the real parser (raises AssertionError naming it)."""
    argv = shlex.split(command)
    parser = (zoomzero_cli if argv[0] == "zoomzero" else easyr1_cli).build_parser()
    try:
        args, extra = parser.parse_known_args(argv[1:])
    except SystemExit as e:
        raise AssertionError(f"the docs' `{command}` does not parse") from e
    assert not [x for x in extra if x.startswith("-")], f"`{command}`: unknown options {extra}"


def test_every_documented_zoomzero_and_easyr1_command_parses():
    for _, command in COMMANDS:
        if command.startswith(("zoomzero ", "easyr1 ")):
            parse(command)
    inline = {m.group(1) for path in DOCS for m in INLINE.finditer(FENCE.sub("", path.read_text(encoding="utf-8")))}
    for command in sorted(inline):  # prose mentions: at least the command exists (`zoomzero data check ROWS`)
        program, *words = command.split()
        path = words[:2] if words[0] == "data" else words[:1]
        if not all(re.fullmatch(r"[a-z][a-z-]*", w) for w in path):
            continue  # a message quoted in prose (`easyr1 train: …`), not a command
        with pytest.raises(SystemExit) as e:
            (zoomzero_cli if program == "zoomzero" else easyr1_cli).main([*path, "--help"])
        assert e.value.code == 0, command


def benchmark_mentions() -> list[tuple[str, str, list[str]]]:
    """(page, script, flags) for every `benchmarks/NAME.py …` in a command or in a prose code span of the docs."""
    lines = [(where, c) for where, c in COMMANDS if "benchmarks/" in c]
    lines += [
        (page(path), span)
        for path in DOCS
        for span in re.findall(r"`([^`]+)`", FENCE.sub("", path.read_text(encoding="utf-8")))
        if re.search(r"benchmarks/\w+\.py", span)
    ]
    out = []
    for where, text in lines:
        for match in re.finditer(r"benchmarks/(\w+)\.py((?:(?!benchmarks/\w+\.py).)*)", " ".join(text.split())):
            out.append((where, match.group(1), re.findall(r"(?<![\w-])--[a-z][\w-]*", match.group(2))))
    return out


def test_documented_benchmark_commands_name_scripts_and_flags_they_have():
    """The benchmark lines (mostly timings, run by hand) cannot drift: each script exists and takes each flag shown."""
    mentions = benchmark_mentions()
    assert {"learning_curve", "learning_curve_videozoomer", "bench_core", "bench_easyr1", "bench_inference"} <= {
        script for _, script, _ in mentions
    }
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    helps: dict[str, str] = {}
    wrong = []
    for where, script, flags in mentions:
        path = REPO / "benchmarks" / f"{script}.py"
        if not path.is_file():
            wrong.append(f"{where}: benchmarks/{script}.py does not exist")
            continue
        if script not in helps:
            done = subprocess.run(
                [sys.executable, str(path), "--help"], cwd=REPO, capture_output=True, text=True, env=env, timeout=300
            )
            assert done.returncode == 0, (script, done.stderr[-2000:])
            helps[script] = done.stdout
        wrong += [
            f"{where}: benchmarks/{script}.py has no {flag}"
            for flag in flags
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helps[script])
        ]
    assert wrong == []


def test_documented_dry_runs_run_as_written(capsys, monkeypatch):
    """In the clone, before any data is in place: exit 0, or exit 2 listing only the data/model placeholders (a hub id
    is one while the suite runs offline with an empty cache)."""
    monkeypatch.chdir(REPO)
    runs = [c for _, c in COMMANDS if how(c)[1] == "test_documented_dry_runs_run_as_written"]
    assert runs
    for command in runs:
        code = easyr1_cli.main(shlex.split(command)[1:])
        out = capsys.readouterr()
        assert "Traceback" not in out.err and code in (0, EXIT_USER), (command, out.err)
        problems = [line for line in out.err.splitlines() if line.startswith("  - ")]
        assert code == 0 or problems, (command, out.err)
        assert all(
            re.match(r"  - (data\.\w+_files|worker\.actor\.model\.model_path): \S+ not found", p)
            or re.match(r"  - worker\.actor\.model\.model_path \S+: no such folder, and not in the local Hugging", p)
            for p in problems
        ), (command, problems)


def test_documented_training_commands_stop_cleanly_without_a_gpu_node(capsys, monkeypatch):
    if vllm_stub.real_vllm_importable():
        pytest.skip("vLLM is installed here: these commands would try to train")
    monkeypatch.chdir(REPO)
    runs = [c for _, c in COMMANDS if how(c)[1] == "test_documented_training_commands_stop_cleanly_without_a_gpu_node"]
    for command in runs:
        assert easyr1_cli.main(shlex.split(command)[1:]) == EXIT_USER
        err = capsys.readouterr().err
        assert err.startswith("easyr1 train: vLLM is not installed") and err.count("\n") == 1, (command, err)


FIXTURE_ROWS = {"cgbench": cgbench_rows, "nextgqa": nextgqa_rows}


def test_documented_score_commands_run_on_fixture_rows(tmp_path, monkeypatch, capsys):
    """Each `zoomzero score` line as written, its --data file made from rows copied from the real annotation files."""
    runs = [c for _, c in COMMANDS if how(c)[1] == "test_documented_score_commands_run_on_fixture_rows"]
    assert len(runs) >= 4
    for i, command in enumerate(runs):
        argv = shlex.split(command)
        args = zoomzero_cli.build_parser().parse_args(argv[1:])
        cwd = tmp_path / str(i)
        (cwd / args.data).parent.mkdir(parents=True)
        monkeypatch.chdir(cwd)
        rows = FIXTURE_ROWS[args.benchmark]()[0]
        write_rows(args.data, rows)
        answers = [json.loads(r["answer"]) for r in rows]
        args.predictions.write_text(
            "".join(json.dumps({"qid": a["qid"], "answer": a["answer"], "spans": a["spans"]}) + "\n" for a in answers)
        )
        assert zoomzero_cli.main(argv[1:]) == 0, command
        assert f"{args.benchmark} · reduction" in capsys.readouterr().out, command
        if args.out is not None:
            assert (cwd / args.out / "report.md").is_file()


def test_documented_cpu_evaluations_run(tmp_path):
    """`zoomzero eval --demo …` and `bash examples/cpu_eval_demo.sh` as written, plus `--limit 2` (CI time)."""
    runs = [c for _, c in COMMANDS if how(c)[1] == "test_documented_cpu_evaluations_run"]
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "OMP_NUM_THREADS": "1",
    }
    for command in runs:
        line = command + " --limit 2 --no-progress"  # two questions of the eight: the same steps and files
        done = subprocess.run(
            ["bash", "-c", line.replace("bash examples/", f"bash {REPO}/examples/")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, (command, done.stderr[-3000:])
        for path in re.findall(r"(?:report|metrics|predictions):\s+(\S+)", done.stdout):
            assert (tmp_path / path).is_file(), (command, path)  # every file it names exists


def test_every_eval_command_in_the_docs_writes_to_its_own_folder():
    """Following the docs in order never refuses a run because another mode already wrote its --out."""
    seen: dict[str, str] = {}
    for where, command in COMMANDS:
        argv = shlex.split(command)
        if argv[:2] == ["zoomzero", "eval"] and "--out" in argv:
            out = argv[argv.index("--out") + 1]
            setting = " ".join(a for a in argv if a not in ("--out", out))
            assert seen.setdefault(out, setting) == setting, f"{where}: {out} is used by two different runs"


def test_the_data_guide_paths_flow_from_step_to_step():
    """Every data/… file a later step reads was written by an earlier one (converted, filtered, linked or cut)."""
    guide = next(p for p in DOCS if p.name == "preparing-data.md")
    made: set[str] = set()
    for command in [c for w, c in COMMANDS if w == page(guide)]:
        argv = shlex.split(command)
        reads = [
            argv[i + 1]
            for i, a in enumerate(argv[:-1])
            if a in ("--data", "--input") and argv[i + 1].startswith("data/")
        ]
        reads += [a for a in argv[3:] if argv[:3] == ["zoomzero", "data", "check"]]
        for path in reads:
            folder_ok = any(m.startswith(path.rstrip("/") + "/") for m in made)
            assert path in made or folder_ok or ("*" in path and any(Path(m).match(path) for m in made)), (
                f"{guide.name}: `{command}` reads {path}, which no earlier step writes"
            )
        made.update(argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--out")
        if argv[:2] == ["ln", "-s"]:
            made.update(f"{argv[-1].rstrip('/')}/{Path(src).name}" for src in argv[2:-1])
        if ">" in argv:
            made.add(argv[argv.index(">") + 1])
    examples = {p.name: p.read_text(encoding="utf-8") for p in EXAMPLES}
    for name, text in examples.items():  # the examples' default rows are where the guide writes them
        for default in re.findall(r"data/eval/\w+\.jsonl", text):
            assert default in made, f"{name} reads {default} by default; docs/preparing-data.md never writes it"


def test_install_commands_name_what_exists():
    """The package is not on a registry yet: the docs install it from a clone or a built wheel, with extras it has."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    installs = re.findall(r"pip install ([^`\n]+)", text)
    assert installs
    for target in installs:
        assert "zoomzero-plugin" not in target, f"`pip install {target}`: zoomzero-plugin is not published"
        extras = re.findall(r"\[([\w,-]+)\]", target)
        declared = (REPO / "pyproject.toml").read_text(encoding="utf-8")
        assert all(f"\n{e} = [" in declared for x in extras for e in x.split(",")), target


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def test_links_and_anchors_resolve():
    broken = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", text)):
            if target.startswith(("http://", "https://")):
                continue
            file, _, anchor = target.partition("#")
            doc = (path.parent / file).resolve() if file else path
            if not doc.exists():
                broken.append(f"{page(path)}: {target}")
            elif anchor and anchor not in {
                slug(h) for h in re.findall(r"^#+ (.+)$", doc.read_text(encoding="utf-8"), re.M)
            }:
                broken.append(f"{page(path)}: {target} (no such heading)")
    assert broken == []


def documented_output(command: str) -> list[str]:
    """The lines docs/easyr1.md shows under `$ COMMAND` in its ```text block."""
    text = (REPO / "docs" / "easyr1.md").read_text(encoding="utf-8")
    block = next(m.group(2) for m in FENCE.finditer(text) if m.group(1) == "text" and f"$ {command}" in m.group(2))
    lines = block.split(f"$ {command}", 1)[1].splitlines()[1:]
    return lines[: next((i for i, line in enumerate(lines) if not line.strip() or line.startswith("$ ")), len(lines))]


def matches(shown: str, printed: list[str]) -> bool:
    pattern = ".*".join(re.escape(part) for part in shown.split("…"))
    return any(re.fullmatch(pattern, line) for line in printed)


def test_the_documented_plugins_and_doctor_output_is_what_they_print(capsys):
    import verl

    assert easyr1_cli.main(["plugins"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line for line in documented_output("easyr1 plugins") if not matches(line, printed)] == []
    shown = documented_output("easyr1 doctor")
    if vllm_stub.real_vllm_importable() or f"EasyR1 (verl)  {verl.__version__} " not in "\n".join(shown):
        pytest.skip("docs/easyr1.md shows doctor on EasyR1 v0.3.2 without vLLM")
    easyr1_cli.main(["doctor"])
    printed = capsys.readouterr().out.splitlines()
    checked = [line for line in shown if line.startswith("  ") or line.startswith(("seams", "all seams", "vLLM "))]
    assert len(checked) > 10 and [line for line in checked if not matches(line, printed)] == []
    rows = [line for line in printed if line.startswith("  ")]  # every seam and support row is documented too
    assert [line for line in rows if not any(matches(shown_line, [line]) for shown_line in checked)] == []
