"""Adversarial model outputs of about 1 MB: what a degenerate RL policy or a hostile input can emit.

Each case stresses one way a naive parser goes quadratic: an opening tag repeated with no closing tag
(a lazy ``<tag>(.*?)</tag>`` search restarts from every one), long whitespace between two ``\\s*`` that
can share it, tags nested thousands deep, long numbers, and very long but well-formed lists. Shared by the
parser tests (each case must parse in linear time) and ``benchmarks/bench_core.py`` (which times them).
"""

from __future__ import annotations

from collections.abc import Callable

MB = 1 << 20


def repeat(piece: str, size: int = MB) -> str:
    """``piece`` repeated to exactly ``size`` characters (the last copy cut)."""
    return (piece * (size // len(piece) + 1))[:size]


def _distinct_pairs(size: int) -> str:
    text = "".join(f"({i}, {i + 0.5}), " for i in range(size // 14))[:size]
    return text[: text.rfind("), ") + 3]


# name -> response of about `size` characters ("'<glue>[(' * 100000" is fixed: the issue's own example)
CASES: dict[str, Callable[[int], str]] = {
    "unclosed <answer>": lambda n: repeat("<answer>", n),
    "unclosed <think>": lambda n: repeat("<think>", n),
    "unclosed <glue>": lambda n: repeat("<glue>", n),
    "unclosed <time> in think": lambda n: "<think>" + repeat("<time>", n) + "</think>",
    "'<glue>[(' * 100000": lambda n: "<glue>[(" * 100000,
    "'<glue>[(1, ' repeated": lambda n: repeat("<glue>[(1, ", n),
    "'<answer>B' repeated": lambda n: repeat("<answer>B", n),
    "closing tags only": lambda n: repeat("</answer></glue></think>", n),
    "'<' repeated": lambda n: repeat("<", n),
    "whitespace": lambda n: " " * n,
    "whitespace in glue list": lambda n: "<glue>[" + " " * n + "x]</glue>",
    "whitespace in glue pair": lambda n: "<glue>[(1" + " " * n + "x]</glue>",
    "whitespace before answer letter": lambda n: "<answer>" + "\n" * n + "B</answer>",
    "nested <think>": lambda n: repeat("<think>", n // 2) + repeat("</think>", n // 2),
    "nested <glue>": lambda n: repeat("<glue>", n // 2) + "[(1, 2)]" + repeat("</glue>", n // 2),
    "nested <answer>": lambda n: repeat("<answer>", n // 2) + "B" + repeat("</answer>", n // 2),
    "empty glue blocks": lambda n: repeat("<glue></glue>", n),
    "empty time tags in think": lambda n: "<think>" + repeat("<time></time>", n) + "</think>",
    "time pairs in think": lambda n: "<think>" + repeat("<time>(1, 2)</time>", n) + "</think>",
    "1 MB number in glue": lambda n: "<glue>[(" + "9" * n + ", 1)]</glue>",
    "think stop-tag prefixes": lambda n: "<think>" + repeat("<answe", n) + "</think>",
    "well-formed list, distinct spans": lambda n: (
        f"<think>x</think><answer>A</answer><glue>[{_distinct_pairs(n)}]</glue>"
    ),
}


def adversarial_responses(size: int = MB) -> dict[str, str]:
    """Name → response text of about ``size`` characters, for every case of :data:`CASES`."""
    return {name: make(size) for name, make in CASES.items()}
