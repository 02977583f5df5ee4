"""The recipe's ``zoomzero:`` section, read once per config into one options object.

```yaml
zoomzero:
  reward: {components: [format, iou, accuracy, zoom], weights: {zoom: 1.0}}   # zoomzero (GVQA) rewards
  zoom: {fps: 1.0, max_visual_tokens: 8192, max_new_tokens: 4, no_spans: skip, prompt: paper}
  tokenadv: {eps: 1.0e-6, std: population, over_turns: false}
  agent: {prompt: train, max_assistant_turns: 5, max_calls: 4, max_frames_per_call: 16, clip_as: images}
```
verl's config takes a new top-level section (EasyR1's does not, so there the same sections live in
``worker.reward.reward_function_kwargs``): the sections and their meaning are the EasyR1 host's, read by the same
option classes, so a setting means one thing on both hosts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zoomzero_plugin.agent.reward import AgentRewardConfig
from zoomzero_plugin.gvqa.reward import RewardConfig

from ..easyr1.zoomzero.options import AgentOptions, TokenAdvOptions, ZoomOptions

SECTION = "zoomzero"
VIDEOZOOMER = "videozoomer"
METHOD_KEY = "reward.reward_manager.name"  # which method's reward the recipe trains with


@dataclass(frozen=True)
class VerlOptions:
    zoom: ZoomOptions
    tokenadv: TokenAdvOptions
    agent: AgentOptions
    reward: RewardConfig
    agent_reward: AgentRewardConfig


def _plain(value: Any) -> Any:
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - verl always has omegaconf
        pass
    return value


def section(config: Any) -> dict[str, Any]:
    """The recipe's ``zoomzero`` section as plain data ({} when absent)."""
    value = _plain(config.get(SECTION) if hasattr(config, "get") else None) or {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{SECTION} must be a mapping of sections, got {value!r}")
    return dict(value)


def method(config: Any) -> str:
    """The recipe's method: its reward manager's name (``videozoomer``, else Zoom-Zero's)."""
    from omegaconf import OmegaConf

    try:
        name = OmegaConf.select(config, METHOD_KEY) if OmegaConf.is_config(config) else None
    except Exception:  # noqa: BLE001 - an unresolvable name reads as the default
        name = None
    return VIDEOZOOMER if name == VIDEOZOOMER else "zoomzero"


def from_section(values: Mapping[str, Any], method: str = "zoomzero") -> VerlOptions:
    """Build the options of ``method`` (``zoomzero``: GVQA rewards; ``videozoomer``: the agent's); ValueError names
    the key that is wrong."""
    unknown = sorted(set(values) - {"reward", "zoom", "tokenadv", "agent"})
    if unknown:
        raise ValueError(f"{SECTION}: unknown section(s) {unknown}; known: ['agent', 'reward', 'tokenadv', 'zoom']")
    reward = dict(values.get("reward") or {})
    agent = AgentOptions.from_kwargs(values)
    gvqa = {k: v for k, v in reward.items() if k in ("components", "weights", "normalize")}
    videozoomer = method == VIDEOZOOMER
    return VerlOptions(
        zoom=ZoomOptions.from_kwargs(values),
        tokenadv=TokenAdvOptions.from_kwargs(values),
        agent=agent,
        reward=RewardConfig() if videozoomer else RewardConfig.from_kwargs(**gvqa),
        agent_reward=AgentRewardConfig.from_kwargs(reward.get("weights") if videozoomer else None, agent.budget),
    )


_cache: dict[int, tuple[Any, VerlOptions]] = {}


def recipe_options(config: Any) -> VerlOptions:
    """The options of a verl config (read once per config object)."""
    hit = _cache.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    options = from_section(section(config), method(config))
    _cache[id(config)] = (config, options)
    return options
