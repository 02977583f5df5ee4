"""Loading the installed plugins (entry points ``easyr1.plugins``) and asking them questions.

Plugins are found with ``importlib.metadata``; ``EASYR1_PLUGINS_BLOCK=name1,name2`` skips some. A plugin
that fails to import, declares a hook the spec does not know, or claims a name another plugin already
claimed stops the load with a message naming the entry point. A check hook that raises ``ValueError`` or a
:class:`~zoomzero_plugin.errors.ZoomzeroError` on a bad config reports it as one of the config's problems.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from zoomzero_plugin.errors import ZoomzeroError

from .errors import PluginError
from .hookspecs import ENTRY_POINT_GROUP, PROJECT, AdvantageEstimator, EasyR1Spec, Rollout

BLOCK_ENV = "EASYR1_PLUGINS_BLOCK"


@dataclass(frozen=True)
class PluginInfo:
    name: str  # entry point name
    target: str  # entry point value, "package.module"
    distribution: str  # "zoomzero-plugin 0.1.0"
    hooks: tuple[str, ...]  # hooks it implements


class PluginHost:
    """The loaded plugins, and their answers merged (first plugin wins nothing: clashes are errors)."""

    def __init__(self, manager: pluggy.PluginManager, infos: Sequence[PluginInfo], blocked: Sequence[str] = ()):
        self.manager = manager
        self.infos = tuple(infos)
        self.blocked = tuple(blocked)  # installed entry points skipped by EASYR1_PLUGINS_BLOCK
        self.estimators = self._merge("easyr1_advantage_estimators", lambda e: e.name)
        self.reward_functions = self._merge_maps("easyr1_reward_functions")
        self.rollouts: dict[str, Rollout] = self._merge("easyr1_rollouts", lambda r: r.name)

    @classmethod
    def load(cls, blocked: Sequence[str] | None = None, extra: Mapping[str, Any] | None = None) -> PluginHost:
        """Load every entry point of ``easyr1.plugins`` (minus ``blocked``), plus ``extra`` name → plugin."""
        if blocked is None:
            blocked = [b.strip() for b in os.environ.get(BLOCK_ENV, "").split(",") if b.strip()]
        manager = pluggy.PluginManager(PROJECT)
        manager.add_hookspecs(EasyR1Spec)
        infos, seen, skipped = [], set(), []
        candidates = [(ep, _distribution(ep)) for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)]
        candidates += [(name, "(registered in code)") for name in (extra or {})]
        for ep, dist in candidates:
            name = ep if isinstance(ep, str) else ep.name
            if name in blocked and name not in skipped:
                skipped.append(name)
            if name in blocked or name in seen:
                continue
            seen.add(name)
            target = "(object)" if isinstance(ep, str) else ep.value
            try:
                plugin = extra[name] if isinstance(ep, str) else ep.load()
                manager.register(plugin, name=name)
            except Exception as e:  # noqa: BLE001 - re-raised with the entry point named
                missing = getattr(e, "name", None) if isinstance(e, ModuleNotFoundError) else None
                stale = missing is not None and (target == missing or target.startswith(missing + "."))
                hint = f" (its entry point names a module {dist} no longer has: reinstall it)" if stale else ""
                raise PluginError(f"easyr1 plugin '{name}' ({target}, {dist}) failed to load: {e}{hint}") from e
            hooks = tuple(sorted(c.name for c in manager.get_hookcallers(plugin) or ()))
            infos.append(PluginInfo(name=name, target=target, distribution=dist, hooks=hooks))
        try:
            manager.check_pending()
        except pluggy.PluginValidationError as e:
            raise PluginError(f"an easyr1 plugin implements a hook that does not exist: {e}") from e
        return cls(manager, infos, skipped)

    # -- merged answers ---------------------------------------------------------------------------

    def per_plugin(self, hook: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """``[(plugin name, result)]`` for every plugin implementing ``hook``, in registration order."""
        return [(plugin, result) for plugin, result in self._call(hook, False, kwargs) if result is not None]

    def _call(self, hook: str, config_errors: bool, kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
        """Every implementation's result; with ``config_errors`` a ValueError/ZoomzeroError is returned, not raised."""
        caller = getattr(self.manager.hook, hook)
        out = []
        for impl in reversed(caller.get_hookimpls()):  # pluggy lists last-registered first
            try:
                out.append((impl.plugin_name, impl.function(**{k: v for k, v in kwargs.items() if k in impl.argnames})))
            except (ValueError, ZoomzeroError) as e:
                if not config_errors:
                    raise
                out.append((impl.plugin_name, e))
        return out

    def _problems(self, hook: str, **kwargs: Any) -> list[str]:
        """A check hook's problems as ``[plugin] message`` lines (an error it raised is one of them)."""
        lines = []
        for plugin, result in self._call(hook, True, kwargs):
            messages = [str(result)] if isinstance(result, Exception) else list(result or ())
            lines += [f"[{plugin}] {m}" for m in messages]
        return lines

    def _merge(self, hook: str, key) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        owner: dict[str, str] = {}
        for plugin, items in self.per_plugin(hook):
            for item in items:
                name = key(item)
                if name in merged:
                    raise PluginError(f"plugins '{owner[name]}' and '{plugin}' both add '{name}' ({hook})")
                merged[name], owner[name] = item, plugin
        return merged

    def _merge_maps(self, hook: str) -> dict[str, str]:
        merged: dict[str, str] = {}
        owner: dict[str, str] = {}
        for plugin, mapping in self.per_plugin(hook):
            for name, value in mapping.items():
                if name in merged:
                    raise PluginError(f"plugins '{owner[name]}' and '{plugin}' both add '{name}' ({hook})")
                merged[name], owner[name] = str(value), plugin
        return merged

    def estimator(self, name: Any) -> AdvantageEstimator | None:
        return self.estimators.get(str(getattr(name, "value", name)))

    def rollout_for(self, config: Any) -> tuple[Rollout, dict[str, Any]] | None:
        """The rollout ``config`` enables and its options, or None (EasyR1's own generation)."""
        enabled = [(r, dict(o)) for r in self.rollouts.values() if (o := r.options(config)) is not None]
        if len(enabled) > 1:
            raise PluginError(
                f"the recipe enables several rollouts ({', '.join(sorted(r.name for r, _ in enabled))}); "
                "enable at most one"
            )
        return enabled[0] if enabled else None

    def option_keys(self) -> set[str]:
        """``reward_function_kwargs`` keys owned by plugins (their option sections)."""
        return {key for _, keys in self.per_plugin("easyr1_option_keys") for key in keys}

    def check_config(self, config: Any) -> list[str]:
        return self._problems("easyr1_check_config", config=config)

    def check_rows(self, config: Any, rows: Sequence[Mapping[str, Any]], split: str) -> list[str]:
        return self._problems("easyr1_check_rows", config=config, rows=rows, split=split)

    def rollout_hooks(self, config: Any, tokenizer: Any, processor: Any) -> list[Any]:
        found = self.per_plugin("easyr1_rollout_hooks", config=config, tokenizer=tokenizer, processor=processor)
        return [hook for _, hooks in found for hook in hooks]

    def job_env(self, config: Any) -> dict[str, str]:
        """The plugins' ``easyr1_job_env`` for ``config``, merged (two plugins setting one variable is an error)."""
        merged: dict[str, str] = {}
        owner: dict[str, str] = {}
        for plugin, mapping in self.per_plugin("easyr1_job_env", config=config):
            for name, value in mapping.items():
                if name in merged and merged[name] != str(value):
                    raise PluginError(f"plugins '{owner[name]}' and '{plugin}' set {name} differently")
                merged[name], owner[name] = str(value), plugin
        return merged

    def describe(self, config: Any) -> dict[str, Mapping[str, Any]]:
        """Each plugin's effective settings; a plugin that cannot describe a broken config says so instead."""
        out = {}
        for plugin, result in self._call("easyr1_describe", True, {"config": config}):
            if isinstance(result, Exception):
                out[plugin] = {"settings": f"not shown: {result} (see the problems below)"}
            elif result is not None:
                out[plugin] = result
        return out


def _distribution(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown distribution"
