"""The recipe's ``zoomzero:`` section, read once per config into the options both hosts share.

```yaml
zoomzero:
  reward: {components: [format, iou, accuracy, zoom], weights: {zoom: 1.0}}   # zoomzero (GVQA) rewards
  zoom: {fps: 1.0, max_visual_tokens: 8192, max_new_tokens: 4, no_spans: skip, prompt: paper}
  tokenadv: {eps: 1.0e-6, std: population, over_turns: false}
  agent: {prompt: train, max_assistant_turns: 5, max_calls: 4, max_frames_per_call: 16, clip_as: images}
```
verl's config takes a new top-level section (EasyR1's does not, so there the same sections live in
``worker.reward.reward_function_kwargs``, the reward's own kwargs beside them): the sections are read by the same
reader into the same :class:`~zoomzero_plugin.hosts.options.RecipeOptions`, so a setting means one thing on both
hosts; only the place a problem names differs (``zoomzero.zoom.fps``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..options import GVQA, SECTIONS, VIDEOZOOMER, RecipeOptions, read_options

SECTION = "zoomzero"
METHODS = {"zoomzero": GVQA, "videozoomer": VIDEOZOOMER}  # a reward manager's name: the reward it computes
METHOD_KEY = "reward.reward_manager.name"  # which method's reward the recipe trains with
CONFIG = f"the verl recipe's {SECTION} section"


def _plain(value: Any) -> Any:
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - verl always has omegaconf
        pass
    return value


def section(config: Any) -> Any:
    """The recipe's ``zoomzero`` section as plain data ({} when absent)."""
    return _plain(config.get(SECTION) if hasattr(config, "get") else None) or {}


def method(config: Any) -> str:
    """The recipe's method: its reward manager's name (``videozoomer``, else Zoom-Zero's ``zoomzero``)."""
    from omegaconf import OmegaConf

    try:
        name = OmegaConf.select(config, METHOD_KEY) if OmegaConf.is_config(config) else None
    except Exception:  # noqa: BLE001 - an unresolvable name reads as the default
        name = None
    return name if name in METHODS else "zoomzero"


def from_section(values: Any, method: str = "zoomzero") -> RecipeOptions:
    """The options of a ``zoomzero`` section for ``method`` (``zoomzero``: GVQA rewards; ``videozoomer``: the
    agent's); its problems (one line each, naming ``zoomzero.<section>.<key>``) in ``problems``."""
    if not isinstance(values, Mapping):
        return RecipeOptions(None, None, None, None, (f"{SECTION} must be a mapping of sections, got {values!r}",))
    known = ("reward", *SECTIONS)
    unknown = sorted(set(values) - set(known))
    reward = values.get("reward") or {}
    if not isinstance(reward, Mapping):
        return RecipeOptions(None, None, None, None, (f"{SECTION}.reward must be a mapping, got {reward!r}",))
    kwargs = {**reward, **{k: values[k] for k in SECTIONS if k in values}}
    options = read_options(METHODS[method], kwargs, where=SECTION, config=CONFIG, reward_where=f"{SECTION}.reward")
    if unknown:
        head = f"{SECTION}: unknown section(s) {unknown}; known: {sorted(known)}"
        return RecipeOptions(**{**options.__dict__, "problems": (head, *options.problems)})
    return options


_cache: dict[int, tuple[Any, RecipeOptions]] = {}


def recipe_options(config: Any) -> RecipeOptions:
    """The options of a verl config (read once per config object); ``.checked()`` raises on its problems."""
    hit = _cache.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    options = from_section(section(config), method(config))
    _cache[id(config)] = (config, options)
    return options
