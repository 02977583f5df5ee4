"""Plugin advantage estimators inside EasyR1's trainer: the enum check and the advantage step.

``RayPPOTrainer.__init__`` rejects any ``algorithm.adv_estimator`` outside EasyR1's ``AdvantageEstimator`` enum. The
wrapped ``__init__`` runs the config checks, then lets the original validate a plugin estimator as the built-in it
declares (``validate_as``, e.g. ``grpo``: no critic, ``rollout.n > 1``) and restores the real name afterwards, so
``fit()`` passes it on. It also marks the datasets for a plugin rollout that needs per-row fields
(:func:`~.generation.mark_row_fields`), before any data-loader worker starts. The wrapped ``compute_advantage`` sends
plugin names to the plugin with the whole batch and every other name to EasyR1's original, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from .checks import check_config
from .errors import ConfigError, format_problems
from .generation import mark_row_fields
from .reward_names import apply_fixup
from .state import current_host


def wrap_trainer_init(original: Callable) -> Callable:
    def __init__(self, config, *args, **kwargs):
        apply_fixup(config.worker.reward)
        problems = check_config(config, current_host())
        if problems:
            raise ConfigError(format_problems(problems, " (checked in the trainer by the easyr1 plugins)"))
        host = current_host()
        selected = host.rollout_for(config)
        if selected is not None and selected[0].row_fields:
            loaders = [kwargs.get(k) for k in ("train_dataloader", "val_dataloader")] + list(args[2:4])
            mark_row_fields([x for x in loaders if x is not None], selected[0].row_fields)
        estimator = host.estimator(config.algorithm.adv_estimator)
        if estimator is None:
            return original(self, config, *args, **kwargs)
        name = config.algorithm.adv_estimator
        config.algorithm.adv_estimator = estimator.validate_as
        try:
            original(self, config, *args, **kwargs)
        finally:
            config.algorithm.adv_estimator = name

    return __init__


def wrap_compute_advantage(original: Callable) -> Callable:
    def compute_advantage(data, adv_estimator, gamma=1.0, lam=1.0):
        estimator = current_host().estimator(adv_estimator)
        if estimator is None:
            return original(data, adv_estimator, gamma, lam)
        advantages, returns = estimator.compute(data, gamma=gamma, lam=lam)
        data.batch["advantages"] = advantages
        data.batch["returns"] = returns
        return data

    return compute_advantage
