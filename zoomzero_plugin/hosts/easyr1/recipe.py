"""Building and checking a recipe the way EasyR1's ``verl.trainer.main`` builds it.

``load_recipe`` merges ``OmegaConf.structured(PPOConfig())``, the YAML and ``key=value`` overrides, then runs
EasyR1's own ``deep_post_init`` (unknown keys and wrong types fail here, as in EasyR1). The checks then look
for what EasyR1 would only discover later, or silently work around: files it drops when missing, a reward
name it cannot resolve, rows its dataset would filter away, unreadable videos.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Sequence
from contextlib import contextmanager, redirect_stdout
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from zoomzero_plugin.hub import FOLDER
from zoomzero_plugin.video import _qwen_vl_utils, probe_duration

from . import cpu_mode
from .checks import check_config, declared_reward_type, easyr1_version, model_source
from .errors import ConfigError, format_problems
from .registry import PluginHost
from .reward_names import FIXUP_ENV, resolve
from .state import current_host

# Paths EasyR1's post_init replaces by None when they do not exist (printing a line nobody reads).
DROPPED_WHEN_MISSING = (
    "data.format_prompt",
    "data.image_dir",
    "data.override_chat_template",
    "trainer.load_checkpoint_path",
)
DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv", ".arrow")
# RLHFDataset's arguments that are the data section's keys of the same name
DATASET_KEYS = (
    "prompt_key",
    "answer_key",
    "image_key",
    "video_key",
    "image_dir",
    "video_fps",
    "format_prompt",
    "min_pixels",
    "max_pixels",
)


class Recipe(NamedTuple):
    config: Any  # PPOConfig after deep_post_init
    raw: Any  # the merged OmegaConf before it (what the recipe asked for)
    notes: list[str]  # keys dropped for this EasyR1 version, and why
    adapted: bool  # the recipe had to be changed to load: EasyR1 must be given `raw`, not the file


# Keys of one supported EasyR1 version that the other rejects, dropped when their meaning is kept.
VERSION_KEYS = {
    "worker.reward.reward_type": "reads the reward type from the reward file's REWARD_TYPE",  # 0.3.2 → main
}


def load_recipe(recipe: str | os.PathLike | None, overrides: Sequence[str] = ()) -> Recipe:
    """Build a recipe with EasyR1's own ``PPOConfig``. Raises :class:`ConfigError`."""
    from verl.trainer.config import PPOConfig

    source = str(recipe) if recipe else "the command line"
    notes: list[str] = []
    dropped: dict[str, Any] = {}
    try:
        default = OmegaConf.structured(PPOConfig())
        parts = [OmegaConf.load(recipe)] if recipe else []
        if overrides:
            parts.append(OmegaConf.from_dotlist(list(overrides)))
        if recipe and not OmegaConf.is_dict(parts[0]):
            raise ConfigError(
                f"{source}: the file holds a YAML {type(parts[0]).__name__.removesuffix('Config').lower()}"
                f", not a mapping of EasyR1 sections (data, algorithm, worker, trainer)"
            )
        if recipe and "stage" in parts[0] and "stage" not in default:
            raise ConfigError(
                f"{source} is a LLaMA-Factory recipe (it has a top-level 'stage'), not an EasyR1 one: "
                f"run it with `llamafactory-cli train {source}`"
            )
        for part in parts:
            dropped.update(_drop_version_keys(part, default))
        raw = OmegaConf.merge(default, *parts)
        config = OmegaConf.to_object(raw)
    except FileNotFoundError as e:
        raise ConfigError(f"recipe {source} not found ({e})") from None
    except yaml.YAMLError as e:
        raise ConfigError(yaml_problem(source, e)) from None
    except OmegaConfBaseException as e:
        key = getattr(e, "full_key", None)
        msg = str(getattr(e, "msg", e)).splitlines()[0]
        where = f" at '{key}'" if key else ""
        raise ConfigError(f"{source}{where}: {msg} (checked against EasyR1 {easyr1_version()}'s PPOConfig)") from None
    with redirect_stdout(io.StringIO()):  # EasyR1 prints "… not found" for paths it drops; we report them
        config.deep_post_init()
    for key, value in dropped.items():
        notes.append(f"{key}: {value!r} dropped: EasyR1 {easyr1_version()} has no such key (it {VERSION_KEYS[key]})")
    if "worker.reward.reward_type" in dropped and config.worker.reward.reward_function:
        declared = declared_reward_type(config.worker.reward.reward_function) or "batch"
        if declared != dropped["worker.reward.reward_type"]:
            raise ConfigError(
                f"{source}: worker.reward.reward_type is {dropped['worker.reward.reward_type']!r} but EasyR1 "
                f"{easyr1_version()} uses the reward file's REWARD_TYPE, {declared!r}"
            )
    return Recipe(config, raw, notes, bool(dropped))


def yaml_problem(source: str, error: yaml.YAMLError) -> str:
    """One line naming the file, line and column (1-based) and what is wrong; a tag is named, never run."""
    mark = getattr(error, "problem_mark", None)
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
    problem = str(getattr(error, "problem", None) or error).strip()
    if isinstance(error, yaml.constructor.ConstructorError) and "'" in problem:
        tag = problem.split("'")[1]
        return f"{where}: the YAML tag {tag!r} is not allowed (a recipe is plain data: tags are never executed)"
    context = getattr(error, "context", None)
    return f"{where}: not valid YAML: {problem}" + (f" ({context})" if context else "")


def _drop_version_keys(part: Any, default: Any) -> dict[str, Any]:
    dropped = {}
    for key in VERSION_KEYS:
        parent_key, _, leaf = key.rpartition(".")
        parent = OmegaConf.select(part, parent_key)
        if parent is not None and leaf in parent and OmegaConf.select(default, key, default="<absent>") == "<absent>":
            dropped[key] = parent.pop(leaf)
    return dropped


def _select(raw: Any, key: str) -> Any:
    return OmegaConf.select(raw, key, default=None)


def _get(config: Any, key: str) -> Any:
    for part in key.split("."):
        config = getattr(config, part, None)
    return config


def _looks_local(path: str) -> bool:
    """A path that cannot be a Hugging Face Hub id ("org/name")."""
    return path.startswith((".", "/", "~")) or path.endswith(DATA_SUFFIXES) or path.count("/") >= 2


def data_path(value: str) -> str:
    """EasyR1's ``path@split`` → path."""
    return value.split("@")[0]


def check_files(config: Any, raw: Any, host: PluginHost) -> tuple[list[str], list[str]]:
    """(problems, notes) about files the recipe names."""
    problems, notes = [], []
    for key in DROPPED_WHEN_MISSING:
        asked = _select(raw, key)
        if asked and _get(config, key) is None:
            problems.append(f"{key}: '{asked}' not found (EasyR1 would silently continue without it)")
    asked = _select(raw, "worker.reward.reward_function")
    if asked and config.worker.reward.reward_function is None:
        names = sorted(host.reward_functions)
        problems.append(
            f"worker.reward.reward_function: '{asked}' is neither an existing file nor a plugin reward name "
            f"(installed: {names or 'none'})"
        )
    for key in ("data.train_files", "data.val_files"):
        value = _get(config, key)
        if not value:
            problems.append(f"{key} is not set")
            continue
        path = data_path(str(value))
        if os.path.exists(os.path.expanduser(path)):
            continue
        if _looks_local(path) or os.path.isdir(path.split("/")[0]):
            problems.append(f"{key}: {path} not found")
        else:
            notes.append(f"{key}: '{path}' does not exist here, so EasyR1 will try it as a Hugging Face Hub id")
    model_problems, model_notes = _model_path(str(config.worker.actor.model.model_path or ""))
    return problems + model_problems, notes + model_notes


def _model_path(path: str) -> tuple[list[str], list[str]]:
    """(problems, notes) about the recipe's model: a folder with a ``config.json``, or a hub id in the local cache or
    known to the Hub (asked once, for a few seconds at most: never the Hub client's retries without network)."""
    key = "worker.actor.model.model_path"
    if not path:
        return [f"{key} is not set"], []
    if not os.path.exists(os.path.expanduser(path)) and os.path.isdir(path.split("/")[0]):
        return [f"{key}: {path} not found"], []  # a relative path whose first folder is here
    where, why = model_source(path)
    if where is None:
        return [f"{key} {path}: {why}"], []
    if where != FOLDER:
        return [], [f"{key}: '{path}' is not a folder here: EasyR1 loads it from the Hugging Face {where}"]
    return [], []


def video_path(data: Any, name: str) -> str:
    """A row's video as EasyR1's dataset opens it: under ``data.image_dir`` when one is set."""
    return os.path.join(data.image_dir, name) if data.image_dir else name


def head_rows(path: str, n: int) -> list[dict[str, Any]]:
    """The first ``n`` rows of a local .jsonl/.json/.parquet file (or of the first such file in a directory)."""
    p = Path(os.path.expanduser(data_path(path)))
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix in (".jsonl", ".json", ".parquet"))
        if not files:
            return []
        p = files[0]
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        batches = pq.ParquetFile(p).iter_batches(batch_size=max(n, 1))
        first = next(batches, None)
        return first.to_pylist()[:n] if first is not None else []
    with p.open(encoding="utf-8") as f:
        if p.suffix == ".json" and f.read(1) == "[":
            f.seek(0)
            return json.load(f)[:n]
        f.seek(0)
        rows = []
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) >= n:
                break
        return rows


def _row_problems(config: Any, rows: list[dict[str, Any]], split: str) -> list[str]:
    data = config.data
    problems = []
    for i, row in enumerate(rows):
        where = f"{split} row {i}"
        for key in (data.prompt_key, data.answer_key):
            if key not in row:
                problems.append(
                    f"{where}: no '{key}' column (data.{'prompt' if key == data.prompt_key else 'answer'}_key)"
                )
        if data.image_key in row and data.video_key in row:
            problems.append(
                f"{where}: has both '{data.image_key}' and '{data.video_key}'; EasyR1 takes the image branch "
                "whenever the image column exists"
            )
        videos = row.get(data.video_key) if data.image_key not in row else None
        if videos is None:
            continue
        placeholders = str(row.get(data.prompt_key, "")).count("<video>")
        if placeholders != len(videos):
            problems.append(
                f"{where}: {len(videos)} video(s) but {placeholders} '<video>' placeholder(s) in the prompt"
            )
        for video in videos:
            path = video_path(data, video)
            try:
                probe_duration(path)
            except Exception as e:  # noqa: BLE001 - reported
                problems.append(f"{where}: video {path} is unreadable ({type(e).__name__}: {e})")
    return problems


@contextmanager
def _quiet_datasets():
    """No "Generating train split" progress bar for a handful of rows."""
    import datasets

    enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if enabled:
            datasets.enable_progress_bars()


def local_processor(config: Any) -> tuple[Any, Any] | None:
    """``(tokenizer, processor)`` of a local model folder as EasyR1's workers load them (its own loaders, with the
    config's chat template and trust_remote_code), loaded once per folder; None when model_path is not a local
    folder. Raises what the loaders raise."""
    model = config.worker.actor.model
    if not os.path.isdir(model.model_path):
        return None
    return _load_processor(model.model_path, config.data.override_chat_template, bool(model.trust_remote_code))


@lru_cache(maxsize=2)
def _load_processor(path: str, chat_template: str | None, trust_remote_code: bool) -> tuple[Any, Any]:
    from verl.utils.tokenizer import get_processor, get_tokenizer

    kwargs = dict(override_chat_template=chat_template, trust_remote_code=trust_remote_code, use_fast=True)
    return get_tokenizer(path, **kwargs), get_processor(path, **kwargs)


def _prompt_lengths(config: Any, rows: list[dict[str, Any]], split: str) -> tuple[list[str], list[str]]:
    """Measure each row's prompt with EasyR1's own RLHFDataset and the model's processor (local models only)."""
    from verl.utils.dataset import RLHFDataset

    model = config.worker.actor.model
    _qwen_vl_utils()  # loaded by us first: its video backend chosen, and its one-time stderr line silenced
    if not os.path.isdir(model.model_path):
        return [], [f"{split}: prompt lengths not measured (model_path is not a local directory)"]
    try:
        tokenizer, processor = local_processor(config)
    except (OSError, ValueError, KeyError) as e:
        return [
            f"worker.actor.model.model_path: {model.model_path} has no loadable tokenizer/processor "
            f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        ], []
    data = config.data
    cap = max(4 * data.max_prompt_length, 8192)
    problems, notes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{split}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows), encoding="utf-8")
        with redirect_stdout(io.StringIO()), _quiet_datasets():
            # the dataset as EasyR1's trainer builds it from the data section, but long prompts kept to be measured
            same = {key: getattr(data, key) for key in DATASET_KEYS}
            dataset = RLHFDataset(
                data_path=str(path),
                tokenizer=tokenizer,
                processor=processor,
                **same,
                max_prompt_length=cap,
                truncation="right",
                filter_overlong_prompts=False,
            )
        lengths = []
        for i in range(len(dataset)):
            try:
                lengths.append(int(dataset[i]["attention_mask"].sum()))
            except Exception as e:  # noqa: BLE001 - reported
                problems.append(f"{split} row {i}: EasyR1's RLHFDataset cannot process it ({type(e).__name__}: {e})")
                continue
            if lengths[-1] > data.max_prompt_length:
                fate = "drops such rows silently" if data.filter_overlong_prompts else "truncates them"
                size = f">= {cap}" if lengths[-1] >= cap else str(lengths[-1])
                problems.append(
                    f"{split} row {i}: prompt is {size} tokens > data.max_prompt_length={data.max_prompt_length} "
                    f"(videos at min_pixels={data.min_pixels}, max_pixels={data.max_pixels}, video_fps="
                    f"{data.video_fps}); EasyR1 {fate}"
                )
    if lengths:
        notes.append(
            f"{split}: prompt lengths of the first {len(lengths)} rows: {min(lengths)}..{max(lengths)} tokens "
            f"(data.max_prompt_length={data.max_prompt_length})"
        )
    return problems, notes


def check_rows(config: Any, n: int, host: PluginHost) -> tuple[list[str], list[str]]:
    """(problems, notes) about the first ``n`` rows of the train and val files."""
    problems, notes = [], []
    for split, files in (("train", config.data.train_files), ("val", config.data.val_files)):
        if not files or not os.path.exists(os.path.expanduser(data_path(files))):
            continue
        try:
            rows = head_rows(files, n)
        except (OSError, ValueError) as e:
            problems.append(f"data.{split}_files: cannot read {files} ({e})")
            continue
        if not rows:
            problems.append(f"data.{split}_files: {files} has no rows")
            continue
        found = _row_problems(config, rows, split) + host.check_rows(config, rows, split)
        problems += found
        if not found:
            more_problems, more_notes = _prompt_lengths(config, rows, split)
            problems += more_problems
            notes += more_notes
    return problems, notes


def check_driver_argv(argv: Sequence[str]) -> dict[str, str]:
    """Validate ``python3 -m verl.trainer.main config=… key=value…`` from inside its ``ray.init``.

    Raises :class:`ConfigError` listing every problem; returns env vars the workers need (a plugin reward
    name the driver's config dropped, see :mod:`.reward_names`; the plugins' job env, a value the user
    exported winning).
    """
    cli = [a for a in argv if not a.startswith("config=")]
    recipe = next((a.split("=", 1)[1] for a in argv if a.startswith("config=")), None)
    config, raw = load_recipe(recipe, cli)[:2]  # EasyR1 accepted it already: nothing was adapted
    host = current_host()
    problems = check_config(config, host) + check_files(config, raw, host)[0]
    cpu = cpu_mode.requested()
    if cpu:
        problems += cpu_mode.refusals(config.worker, config.trainer.nnodes)
    if problems:
        raise ConfigError(format_problems(problems, f" {recipe or ''} (checked by the easyr1 plugins at ray.init)"))
    asked = OmegaConf.select(raw, "worker.reward.reward_function", default=None)
    job_env = {**host.job_env(config), **(cpu_mode.job_env() if cpu else {})}
    env = {name: os.environ.get(name, value) for name, value in job_env.items()}
    if cpu:
        for note in cpu_mode.prepare_driver(config):
            print(f"note: {note}")
    return {**env, FIXUP_ENV: asked} if asked and resolve(asked) else env
