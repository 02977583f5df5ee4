"""Renamed settings: an old recipe key, flag, ``--model_args`` key or stored setting is still accepted for one
release, with one line on stderr naming its new name (once per process).

The tables of old names sit beside the fields they rename (``ZoomBudget``'s in :mod:`~zoomzero_plugin.gvqa.zoom`,
``AgentBudget``'s in :mod:`~zoomzero_plugin.agent.budget`, ``ModeConfig``'s in
:mod:`~zoomzero_plugin.inference.modes`); this module is the mechanism they share. The whole list: README's
"Names" section.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

_said: set[str] = set()  # messages already printed in this process


def deprecated(old: str, new: str) -> None:
    """Print, once per process, one line saying that ``old`` is now ``new``."""
    message = f"zoomzero: {old} is deprecated (accepted until the next release): use {new}"
    if message not in _said:
        _said.add(message)
        print(message, file=sys.stderr)


def rename_keys(values: Mapping[str, Any], renamed: Mapping[str, str], where: str = "") -> dict[str, Any]:
    """``values`` with each key that is an old name in ``renamed`` under its new name (a message each, naming
    ``where + key``). ValueError when an old name and its new name are both given."""
    out = dict(values)
    for old, new in renamed.items():
        if old in out:
            if new in out:
                raise ValueError(f"{where}{old} is the old name of {where}{new}: give only {new}")
            deprecated(where + old, where + new)
            out[new] = out.pop(old)
    return out


def rename_value(value: Any, renamed: Mapping[str, str], where: str) -> Any:
    """``value``, or its new spelling when it is an old one of ``renamed`` (with a message naming ``where``)."""
    if isinstance(value, str) and value in renamed:
        deprecated(f"{where} {value}", f"{where} {renamed[value]}")
        return renamed[value]
    return value


def value_type(renamed: Mapping[str, str], flag: str) -> Callable[[str], str]:
    """An argparse ``type`` that reads an old value of ``flag`` as its new one (choices are checked after it)."""

    def read(text: str) -> str:
        return rename_value(text, renamed, flag)

    read.__name__ = "str"
    return read


class RenamedFlag(argparse.Action):
    """An old flag: stores into the new flag's ``dest`` and says the new flag's name. Hidden from ``--help``."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        deprecated(str(option_string), self.new)
        setattr(namespace, self.dest, values)


def add_renamed_flags(parser: argparse._ActionsContainer, renamed: Mapping[str, str], prefix: str = "") -> None:
    """For each ``old → new`` dest of ``renamed`` whose new flag ``--prefix-new`` the parser has, accept
    ``--prefix-old`` too (same type and choices)."""
    actions = {a.dest: a for a in parser._actions}
    for old, new in renamed.items():
        action = actions[prefix + new]
        parser.add_argument(
            flag(prefix + old),
            dest=action.dest,
            action=RenamedFlag,
            new=action.option_strings[0],
            type=action.type,
            choices=action.choices,
            metavar=action.metavar,
        )


def flag(dest: str) -> str:
    """The flag of an argparse ``dest`` (``max_visual_tokens`` → ``--max-visual-tokens``)."""
    return "--" + dest.replace("_", "-")


def upgrade_settings(
    flat: Mapping[str, Any], keys: Mapping[str, str], values: Mapping[str, Mapping[str, str]] = {}
) -> dict[str, Any]:  # noqa: B006 - read only
    """Stored settings (flattened: ``config.budget.max_tokens``) in this release's words: each old key of ``keys``
    under its new one, each old value of ``values[new key]`` as its new one."""
    out = {keys.get(k, k): v for k, v in flat.items()}
    for key, renamed in values.items():
        if isinstance(out.get(key), str) and out[key] in renamed:
            out[key] = renamed[out[key]]
    return out
