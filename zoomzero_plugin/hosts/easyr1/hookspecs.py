"""What an EasyR1 plugin can add: the pluggy hook specifications of the project ``easyr1``.

A plugin is any module (or object) with ``@hookimpl`` functions, declared by its package as an entry
point in the group ``easyr1.plugins``::

    [project.entry-points."easyr1.plugins"]
    myplugin = "mypackage.easyr1_plugin"

Every hook is optional. Hooks receive EasyR1's own objects (``PPOConfig``, ``DataProto``, the trainer);
they run in whichever process EasyR1 runs the step in (driver, ``Runner`` actor, reward actors).
Options of an estimator or a rollout hook live in ``worker.reward.reward_function_kwargs[<its name>]``
(EasyR1 rejects new top-level keys); the host never passes those keys to a reward function that does
not declare them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pluggy

PROJECT = "easyr1"
ENTRY_POINT_GROUP = "easyr1.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class AdvantageEstimator:
    """An advantage estimator selected by ``algorithm.adv_estimator: <name>``.

    ``compute(data, gamma, lam) -> (advantages, returns)`` receives the whole ``DataProto`` (EasyR1's own
    estimators only see ``token_level_rewards``, ``response_mask`` and ``uid``); both outputs are
    (bs, response_length) float tensors. ``prepare(trainer, batch)`` runs on each training batch right
    after its rewards were computed and adds what ``compute`` needs (masks, options in ``meta_info``); the
    metrics it may return (name → value) are logged with the step's.
    With ``needs_reward_components`` the host stores every numeric per-response value the reward function
    returned (besides ``overall``) as ``batch.batch["reward_component/<key>"]`` (bs,) float32.
    ``validate_as`` names the EasyR1 estimator whose trainer checks apply (``grpo``: no critic, rollout.n > 1).
    """

    name: str
    compute: Callable[..., tuple[Any, Any]]
    prepare: Callable[[Any, Any], Mapping[str, float] | None] | None = None
    needs_reward_components: bool = True
    validate_as: str = "grpo"
    summary: str = ""


@dataclass(frozen=True)
class Rollout:
    """A generation that replaces EasyR1's single ``generate_sequences`` for the recipes that enable it (a
    multi-turn tool rollout, say).

    Driver side, in the trainer: ``options(config)`` returns this rollout's options (JSON-able) when the
    recipe enables it, else None; the host then sends the main generation of every training and validation
    batch to it (rollout hooks such as the zoom pass still get EasyR1's plain generation).

    Worker side, in each rollout worker on its share of the prompts: ``generate(worker, prompts, options)``
    runs in place of ``vLLMRollout.generate_sequences`` and returns what that returns — ``n`` responses per
    prompt in the same order, with ``prompts``, ``responses``, ``input_ids``, ``attention_mask``,
    ``response_mask``, ``position_ids`` and ``multi_modal_data``. ``worker`` is a
    :class:`~.generation.RolloutWorker`: the tokenizer, the processor and EasyR1's own rollout for one engine
    call per round. :mod:`.multiturn` assembles such a batch when tokens the policy did not sample
    (observations) sit inside a response.

    ``metrics(batch, reward_metrics)`` (driver, optional) turns a generated batch and the reward function's
    per-response values into logged metrics (name → value). ``row_fields``: fields of EasyR1's dataset items
    (e.g. ``ground_truth``) the rollout needs per prompt; EasyR1 keeps them out of the generation batch, so the
    host copies them into each row's ``multi_modal_data`` under :data:`~.generation.ROW_FIELDS_KEY`.
    """

    name: str
    options: Callable[[Any], Mapping[str, Any] | None]
    generate: Callable[[Any, Any, Mapping[str, Any]], Any]
    metrics: Callable[[Any, Mapping[str, Sequence[Any]]], Mapping[str, float]] | None = None
    summary: str = ""
    row_fields: tuple[str, ...] = ()


class RolloutHook(Protocol):
    """Runs on each generated batch (training and validation) before its rewards are computed.

    Called as ``hook(trainer, batch, mode)`` with ``mode`` ``"train"`` or ``"val"`` while the rollout
    engine is loaded, so it may call ``trainer.actor_rollout_ref_wg.generate_sequences``. It may add
    per-response fields for the reward function with :func:`~.reward_extras.add_reward_extras` and returns
    metrics (name → value) to log under ``zoom/…`` style prefixes of its choosing.
    """

    name: str

    def __call__(self, trainer: Any, batch: Any, mode: str) -> Mapping[str, float]: ...


class EasyR1Spec:
    """The hooks. Each returns ``None`` when the plugin has nothing to add."""

    @hookspec
    def easyr1_advantage_estimators(self) -> Sequence[AdvantageEstimator] | None:
        """Advantage estimators this plugin adds (names must not clash with EasyR1's)."""

    @hookspec
    def easyr1_rollouts(self) -> Sequence[Rollout] | None:
        """Rollouts this plugin adds (names must be unique); a recipe enables at most one of them."""

    @hookspec
    def easyr1_reward_functions(self) -> Mapping[str, str] | None:
        """Named reward functions: ``{"zoomzero:gvqa": "/abs/path/file.py:function"}``.

        A recipe may then say ``worker.reward.reward_function: zoomzero:gvqa``.
        """

    @hookspec
    def easyr1_option_keys(self) -> Sequence[str] | None:
        """Keys of ``worker.reward.reward_function_kwargs`` this plugin reads (e.g. ``zoom``, ``tokenadv``).

        The host does not pass them to a reward function whose signature does not declare them.
        """

    @hookspec
    def easyr1_check_config(self, config: Any) -> Sequence[str] | None:
        """Problems with a fully built ``PPOConfig`` (one sentence each, naming the key); empty if fine."""

    @hookspec
    def easyr1_check_rows(self, config: Any, rows: Sequence[Mapping[str, Any]], split: str) -> Sequence[str] | None:
        """Problems with the first rows of ``data.train_files`` / ``data.val_files`` (``split``)."""

    @hookspec
    def easyr1_rollout_hooks(self, config: Any, tokenizer: Any, processor: Any) -> Sequence[RolloutHook] | None:
        """Rollout hooks to run for this config (return none when the config does not enable them)."""

    @hookspec
    def easyr1_job_env(self, config: Any) -> Mapping[str, str] | None:
        """Environment variables every process of the job needs for ``config`` (read at import time by a
        library, say). The launcher sets them in the driver unless the user already did, and passes them to
        every Ray worker through the runtime env, on every node."""

    @hookspec
    def easyr1_describe(self, config: Any) -> Mapping[str, Any] | None:
        """The effective settings this plugin will use for ``config`` (printed by ``easyr1 train --dry-run``)."""
