"""What happens to a generated batch before EasyR1 sees its rewards.

For a config that uses a plugin estimator, rollout hooks or a plugin rollout, each generated batch goes through a
:class:`RewardStep`: rollout hooks (while the rollout engine is still loaded), then EasyR1's own reward manager actor
(once, with the hooks' extras), then the plugin rollout's metrics and — in training — the per-response reward components
and the estimator's ``prepare``. A plugin rollout generates the batch itself: ``_make_batch_data`` and ``_validate`` run
with their generation routed to it (:mod:`.generation`). ``_make_batch_data`` and ``_validate`` are wrapped so that the
step runs wherever EasyR1 would call the reward manager during generation (online filtering, validation) and, when
EasyR1 itself would compute rewards later in ``fit()``, at the end of ``_make_batch_data``: the batch then carries
``token_level_scores`` and ``fit()`` skips the reward actor. A config that uses neither goes straight to EasyR1's
originals.
"""

from __future__ import annotations

import numbers
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from .generation import routed, unrouted
from .hookspecs import AdvantageEstimator, Rollout
from .reward_extras import DELIVERED, EXTRAS_KEY
from .sampling_seed import stepped
from .state import current_host

COMPONENT_PREFIX = "reward_component/"
_PLUGINS_ATTR = "_easyr1_plugins"


@dataclass
class RunPlugins:
    """The plugin features one trainer uses."""

    estimator: AdvantageEstimator | None
    hooks: list[Any] = field(default_factory=list)
    rollout: tuple[Rollout, dict[str, Any]] | None = None  # the plugin rollout that owns generation, its options

    @property
    def active(self) -> bool:
        return self.estimator is not None or bool(self.hooks) or self.rollout is not None


def run_plugins(trainer: Any) -> RunPlugins:
    """The plugin features of ``trainer``'s config (built once per trainer)."""
    plugins = getattr(trainer, _PLUGINS_ATTR, None)
    if plugins is None:
        host = current_host()
        config = trainer.config
        plugins = RunPlugins(
            estimator=host.estimator(config.algorithm.adv_estimator),
            hooks=host.rollout_hooks(config, trainer.tokenizer, trainer.processor),
            rollout=host.rollout_for(config),
        )
        setattr(trainer, _PLUGINS_ATTR, plugins)
    return plugins


def component_values(reward_metrics: Mapping[str, Any], n: int) -> dict[str, torch.Tensor]:
    """Per-response numeric values of a reward manager's metrics (everything but ``overall``) as (n,) tensors."""
    out = {}
    for key, values in reward_metrics.items():
        if key == "overall" or key == DELIVERED or len(values) != n:
            continue
        if all(isinstance(v, numbers.Real) for v in values):
            out[key] = torch.tensor([float(v) for v in values], dtype=torch.float32)
    return out


class RewardStep:
    """Rollout hooks → reward manager → components and estimator inputs, for one generated batch."""

    def __init__(self, trainer: Any, plugins: RunPlugins, reward_manager: Any, mode: str):
        self.trainer, self.plugins, self.reward_manager, self.mode = trainer, plugins, reward_manager, mode
        self._stats: dict[str, list[tuple[float, int]]] = defaultdict(list)

    def __call__(self, batch: Any) -> tuple[torch.Tensor, dict[str, list[Any]]]:
        import ray

        with unrouted(self.trainer):  # hooks run single-turn passes on EasyR1's own generation
            for hook in self.plugins.hooks:
                self._add(hook(self.trainer, batch, self.mode), len(batch))
        reward_tensor, reward_metrics = ray.get(self.reward_manager.compute_reward.remote(batch))
        delivered = reward_metrics.pop(DELIVERED, None)
        if EXTRAS_KEY in batch.non_tensor_batch and not delivered:
            raise RuntimeError(
                "the reward manager actor ignored the rollout hooks' reward extras: the easyr1 plugins are not "
                "active in it (its Ray worker did not run zoomzero_plugin.hosts.easyr1.activation.setup_worker)"
            )
        rollout = self.plugins.rollout[0] if self.plugins.rollout else None
        if rollout is not None and rollout.metrics is not None:
            self._add(rollout.metrics(batch, reward_metrics), len(batch))
        estimator = self.plugins.estimator
        if self.mode == "train" and estimator is not None:
            if estimator.needs_reward_components:
                for key, values in component_values(reward_metrics, len(batch)).items():
                    batch.batch[COMPONENT_PREFIX + key] = values
            if estimator.prepare is not None:
                self._add(estimator.prepare(self.trainer, batch), len(batch))  # it may return metrics
        return reward_tensor, reward_metrics

    def _add(self, metrics: Mapping[str, float] | None, n: int) -> None:
        for key, value in (metrics or {}).items():
            self._stats[key].append((float(value), n))

    def stats(self, prefix: str = "") -> dict[str, float]:
        """Hook metrics averaged over every batch the step saw, weighted by batch size."""
        out = {}
        for key, pairs in self._stats.items():
            total = sum(n for _, n in pairs)
            out[prefix + key] = sum(v * n for v, n in pairs) / total if total else float("nan")
        return out


class _Remote:
    def __init__(self, fn: Callable):
        self._fn = fn

    def remote(self, batch):
        import ray

        return ray.put(self._fn(batch))


class StepAsRewardManager:
    """Stands in for a reward-manager actor handle: ``compute_reward.remote(batch)`` runs the step."""

    def __init__(self, step: RewardStep):
        self.compute_reward = _Remote(step)


def wrap_make_batch_data(original: Callable) -> Callable:
    def _make_batch_data(self, metrics):
        from verl.trainer.metrics import reduce_metrics

        plugins = run_plugins(self)
        if not plugins.active:
            with stepped(self):
                return original(self, metrics)
        step = RewardStep(self, plugins, self.reward_fn, "train")
        reward_manager, self.reward_fn = self.reward_fn, StepAsRewardManager(step)
        try:
            with stepped(self), routed(self, plugins.rollout):
                batch = original(self, metrics)  # online filtering calls the step per generated mini-batch
        finally:
            self.reward_fn = reward_manager
        if "token_level_scores" not in batch.batch:
            reward_tensor, reward_metrics = step(batch)
            batch.batch["token_level_scores"] = reward_tensor
            metrics.update({f"reward/{k}": v for k, v in reduce_metrics(reward_metrics).items()})
        metrics.update(step.stats())
        return batch

    return _make_batch_data


def wrap_validate(original: Callable) -> Callable:
    def _validate(self):
        plugins = run_plugins(self)
        if not (plugins.hooks or plugins.rollout) or self.val_reward_fn is None:
            return original(self)
        step = RewardStep(self, plugins, self.val_reward_fn, "val")
        reward_manager, self.val_reward_fn = self.val_reward_fn, StepAsRewardManager(step)
        try:
            with routed(self, plugins.rollout):
                val_metrics = original(self)
        finally:
            self.val_reward_fn = reward_manager
        val_metrics.update(step.stats(prefix="val/"))
        return val_metrics

    return _validate
