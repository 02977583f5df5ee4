"""Linear-time scanning of model output: ``<tag>…</tag>`` blocks, strict numbers and span lists.

RL policies emit degenerate repetitions (``'<answer>' * 8000``) and responses reach 32k tokens, so every
function here runs in time linear in the length of the text, whatever the text:

- blocks are found with ``str.find``/``str.rfind`` (a constant number of scans, or one pass for all
  blocks), never by retrying a failed search from every later opening tag;
- the few regular expressions are *anchored single tokens* (whitespace, a number, a pair): every
  repetition in them is followed by a character it cannot match, so no two repetitions can share a
  character and the engine backtracks at most once over any character.

Block semantics are those of ``re.finditer(r"<tag>(.*?)</tag>", text, re.DOTALL)``: blocks are read left
to right, a block's content runs to the *first* closing tag after its opening tag, and the next block is
searched after that closing tag. An opening tag with no closing tag after it is *unclosed* (a truncated
response); no block starts after it.

Numbers are ASCII only: ``[-+]?(digits[.digits]|.digits)[e[-+]digits]`` or ``nan``/``inf``/``infinity``
(any case, optional sign). ``float()`` alone would also read ``'٣'``, ``'１２'`` or ``'1_0'``; these are not
numbers here. A *pair* is ``(a, b)`` or ``[a, b]`` with matching brackets; a *span list* is
``[pair, pair, …]`` (an optional trailing comma, whitespace anywhere between tokens).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_SPACE = re.compile(r"\s*")  # anchored: one greedy run, nothing after it can fail
_NUMBER = (
    r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # digits[.digits] or .digits, an optional exponent
    r"|[-+]?(?:[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"  # nan, inf, infinity (any case, optional sign)
)
_NUMBER_RE = re.compile(_NUMBER)
# A pair token: bracket, number, comma, number, bracket. Each `\s*` is followed by a bracket, a digit/sign/
# letter of a number, or a comma, none of which is whitespace; a number is followed by whitespace, a comma or
# a bracket, none of which can extend it. So the match is unambiguous and linear.
_PAIR = rf"([\(\[])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\)\]])"
_PAIR_RE = re.compile(_PAIR)
# a pair in a list with the whitespace and comma after it, all of it as group 1 (for read_span_list's findall)
_ITEM_ALL_RE = re.compile(rf"({_PAIR}\s*(,\s*)?)")
_CLOSING = {"(": ")", "[": "]"}
_CLOSE_OF = str.maketrans(_CLOSING)
# what _plain_items leaves to _items: ASCII whitespace but " " (str.isspace, \s) and "_"
_UNUSUAL = b"\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f_"
_ROUND = bytes.maketrans(b"[]", b"()")
_NOT_STRUCTURE = bytes(range(256)).translate(None, b"()[],")
_NOT_BRACKET = bytes(range(256)).translate(None, b"()[]")
_CLOSE_OF_BYTES = bytes.maketrans(b"([", b")]")
_PIECES_FROM = 4096  # tagged_pairs(distinct=True) reads pieces from this length on (one findall is faster below)


@dataclass(frozen=True)
class Block:
    """One ``<tag>content</tag>`` block; indices are into the scanned text."""

    start: int  # index of the opening tag's "<"
    content_start: int  # index of the content's first character (just after the opening tag)
    end: int  # index just after the closing tag's ">"
    content: str


@lru_cache(maxsize=64)
def tags(tag: str) -> tuple[str, str]:
    """``("<tag>", "</tag>")``. Tag names are ASCII letters, digits, ``_`` and ``-`` (so the two never overlap)."""
    if not isinstance(tag, str) or _TAG_NAME.fullmatch(tag) is None:
        raise ValueError(f"not a tag name: {tag!r}")
    return f"<{tag}>", f"</{tag}>"


def first_block(text: str, tag: str, start: int = 0) -> Block | None:
    """The first block at or after ``start``; None when there is none (no tag, or the first one is unclosed)."""
    bounds = first_bounds(text, tag, start)
    if bounds is None:
        return None
    i, content_start, content_end = bounds
    return Block(i, content_start, content_end + len(tags(tag)[1]), text[content_start:content_end])


def first_bounds(text: str, tag: str, start: int = 0) -> tuple[int, int, int] | None:
    """:func:`first_block` as ``(start, content_start, content_end)`` indices, without building the Block."""
    open_, close = tags(tag)
    i = text.find(open_, start)
    if i < 0:
        return None
    j = text.find(close, i + len(open_))
    if j < 0:
        return None
    return i, i + len(open_), j


@lru_cache(maxsize=32)
def _block_re(tag: str) -> re.Pattern[str]:
    open_, close = tags(tag)
    return re.compile(rf"{re.escape(open_)}(.*?){re.escape(close)}", re.DOTALL)


def _closed_blocks(text: str, tag: str) -> Iterator[re.Match[str]]:
    # The search stops after the last closing tag, so every opening tag it meets has a closing tag after it:
    # each attempt succeeds at the first one and the search resumes there (one pass). Unbounded, the lazy
    # `.*?` would rescan to the end from every unclosed opening tag (quadratic).
    end = text.rfind(tags(tag)[1])
    return _block_re(tag).finditer(text, 0, end + len(tags(tag)[1])) if end >= 0 else iter(())


def iter_blocks(text: str, tag: str) -> Iterator[Block]:
    """Every block, left to right, in one pass."""
    for m in _closed_blocks(text, tag):
        yield Block(m.start(), m.start(1), m.end(), m.group(1))


def last_block(text: str, tag: str) -> Block | None:
    """The last block :func:`iter_blocks` would yield, in a constant number of scans.

    Let C be the last closing tag and O the last opening tag before it (openings after C are unclosed).
    The last block ends at the first closing tag after O. It starts at the first opening tag after P, the
    last closing tag before O: every opening tag before P is closed by P at the latest, so no block
    spans P, and the block holding O is the first one to start after P.
    """
    bounds = last_bounds(text, tag)
    if bounds is None:
        return None
    start, content_start, content_end = bounds
    return Block(start, content_start, content_end + len(tags(tag)[1]), text[content_start:content_end])


def last_bounds(text: str, tag: str) -> tuple[int, int, int] | None:
    """:func:`last_block` as ``(start, content_start, content_end)`` indices, without building the Block."""
    open_, close = tags(tag)
    c = text.rfind(close)
    if c < 0:
        return None
    o = text.rfind(open_, 0, c)
    if o < 0:
        return None
    end = text.find(close, o + len(open_))
    p = text.rfind(close, 0, o)
    start = text.find(open_, 0 if p < 0 else p + len(close))
    return start, start + len(open_), end


def count_blocks(text: str, tag: str, limit: int | None = None) -> int:
    """How many blocks :func:`iter_blocks` yields, stopping at ``limit`` when given."""
    n = 0
    for _ in iter_blocks(text, tag):
        n += 1
        if limit is not None and n >= limit:
            break
    return n


def unclosed(text: str, tag: str) -> int | None:
    """Index of the opening tag that is never closed (a truncated block), or None.

    It is the first opening tag after the last closing tag: an opening tag before a closing tag is closed.
    """
    open_, close = tags(tag)
    c = text.rfind(close)
    i = text.find(open_, 0 if c < 0 else c + len(close))
    return None if i < 0 else i


def block_ranges(text: str, tag: str) -> list[tuple[int, int]]:
    """``[start, end)`` of every block, tags included, and of an unclosed last block (it runs to the end)."""
    ranges = [m.span() for m in _closed_blocks(text, tag)]
    tail = text.find(tags(tag)[0], ranges[-1][1] if ranges else 0)
    if tail >= 0:
        ranges.append((tail, len(text)))
    return ranges


def first_of(text: str, needles: Sequence[str], start: int = 0) -> tuple[int, str | None]:
    """The earliest occurrence of any of ``needles`` at or after ``start``: ``(index, needle)``, or ``(-1, None)``.

    One ``str.find`` per needle; on a tie the longer needle wins.
    """
    best, found = -1, None
    for needle in needles:
        i = text.find(needle, start, len(text) if best < 0 else best + len(needle))
        if i >= 0 and (best < 0 or i < best or (i == best and len(needle) > len(found))):
            best, found = i, needle
    return best, found


def skip_space(text: str, pos: int) -> int:
    """The index of the first non-whitespace character at or after ``pos`` (``str.isspace`` whitespace)."""
    if pos < len(text) and not text[pos].isspace():
        return pos  # the usual case, without the regex call
    return _SPACE.match(text, pos).end()


def read_number(text: str, pos: int) -> tuple[float, int] | None:
    """The ASCII number starting exactly at ``pos`` and the index after it; None if there is none.

    The longest match is taken (``1.5e3`` not ``1.5``); ``'1e'`` reads as ``1`` followed by ``e``.
    """
    m = _NUMBER_RE.match(text, pos)
    return None if m is None else (float(m.group()), m.end())


def read_pair(text: str, pos: int) -> tuple[float, float, int] | None:
    """``(a, b)`` or ``[a, b]`` starting exactly at ``pos``: ``(a, b, index after it)``; None if not a pair.

    Brackets must match: ``(3, 5]`` is not a pair.
    """
    m = _PAIR_RE.match(text, pos)
    if m is None or _CLOSING[m.group(1)] != m.group(4):
        return None
    return float(m.group(2)), float(m.group(3)), m.end()


@lru_cache(maxsize=16)
def _tagged_pair_re(tag: str) -> re.Pattern[str]:
    open_, close = tags(tag)
    return re.compile(rf"{re.escape(open_)}\s*{_PAIR}\s*{re.escape(close)}")


def tagged_pairs(text: str, tag: str, distinct: bool = False) -> list[tuple[float, float]]:
    """Every ``<tag>(a, b)</tag>`` (whitespace allowed inside the tags), left to right, as float pairs.

    Read wherever an opening tag is directly followed by a pair and the closing tag, so
    ``<tag>x<tag>(1, 2)</tag>`` gives ``(1, 2)``. ``distinct``: each pair as written once (first
    occurrence order). Linear: an attempt stops at the first character that cannot continue a pair (the
    next ``<`` at the latest), so no two attempts scan the same text.
    """
    if distinct and len(text) >= _PIECES_FROM:
        # A match runs from an opening tag to the closing tag after it and holds no "<" between, so it never
        # reaches the next opening tag: the text after each opening tag up to the next one (a piece) is read
        # alone, and equal pieces read alike, so each distinct piece is read once (degenerate outputs repeat).
        item = _tagged_item_re(tag)
        pieces = dict.fromkeys(text.split(tags(tag)[0])[1:])
        found = dict.fromkeys(m.groups() for m in map(item.match, pieces) if m is not None)
    else:
        found = _tagged_pair_re(tag).findall(text)
        if distinct:
            found = dict.fromkeys(found)
    return [(float(a), float(b)) for opening, a, b, closing in found if _CLOSING[opening] == closing]


@lru_cache(maxsize=16)
def _tagged_item_re(tag: str) -> re.Pattern[str]:
    return re.compile(rf"\s*{_PAIR}\s*{re.escape(tags(tag)[1])}")


def read_span_list(text: str) -> list[tuple[float, float]] | None:
    """The pairs of ``text`` when the whole of it (surrounding whitespace aside) is a span list, else None.

    ``"[(1, 2), [3, 4],]"`` → ``[(1.0, 2.0), (3.0, 4.0)]``; ``"[]"`` → ``[]``; ``"[(1, 2)"``,
    ``"[(3,5]]"``, ``"[(1 2)]"`` → None. Numbers are returned as floats, unchecked (``nan``, ``-1``).
    """
    columns = read_span_columns(text)
    return None if columns is None else list(zip(*columns))


def read_span_columns(text: str) -> tuple[list[float], list[float]] | None:
    """:func:`read_span_list` as two columns, ``(starts, ends)`` (no tuple per pair: for long lists)."""
    i = skip_space(text, 0)
    end = len(text.rstrip()) - 1  # the last non-whitespace character: the list's closing bracket
    if i >= end or text[i] != "[" or text[end] != "]":
        return None
    i = skip_space(text, i + 1)
    if i == end:
        return [], []
    columns = _plain_items(text[i:end])
    return _items(text, i, end) if columns is None else columns


def _items(text: str, start: int, end: int) -> tuple[list[float], list[float]] | None:
    """The columns of a span list whose text between the brackets is ``text[start:end]`` (any spacing), or None.

    One ``findall``: the items form a list exactly when the matches tile ``text[start:end]`` (their lengths add
    up to its length: matches never overlap), each pair's brackets match, and only the last item lacks a comma.
    Linear: an attempt can only start at a bracket and ends by the pair's closing bracket (see ``_PAIR``), so
    attempts share no characters; attempts elsewhere fail at their first character.
    """
    items = _ITEM_ALL_RE.findall(text, start, end)
    if not items:
        return None
    whole, opening, a, b, closing, comma = zip(*items)
    tiled = sum(map(len, whole)) == end - start
    if not tiled or "".join(opening).translate(_CLOSE_OF) != "".join(closing) or "" in comma[:-1]:
        return None
    return list(map(float, a)), list(map(float, b))


def _plain_items(body: str) -> tuple[list[float], list[float]] | None:
    """:func:`_items` of the usual spelling, ``(1, 2.5), [3, 4]``, with C-speed ``bytes`` methods only (about 4x
    faster on long lists); None when ``body`` is not of that spelling (then :func:`_items` decides).

    The usual spelling: ASCII, no ``_`` (``float`` reads ``1_0``), and whitespace only as one space after a
    comma (so the spaces can be dropped). With ``[]`` written ``()``, its brackets and commas must read
    ``(,),(,),…`` (a trailing comma or not), the text must start with ``(`` and end with ``)`` or ``),``, and
    pairs must meet as ``),(``: then every pair is a bracket, a number, a comma, a number and a bracket (on
    ASCII text without whitespace or ``_``, ``float`` reads exactly the numbers of ``_NUMBER``), and each
    pair's brackets must match.
    """
    if not body.isascii():
        return None
    raw = body.encode()
    if len(raw.translate(None, _UNUSUAL)) != len(raw) or raw.count(b" ") != raw.count(b", "):
        return None
    b = raw.translate(None, b" ")
    rounded = b.translate(_ROUND)
    shape = rounded.translate(None, _NOT_STRUCTURE)
    n = (len(shape) + 1) // 4  # pairs
    # nothing before the first pair, between two pairs but ",", or after the last but ","
    if n == 0 or not rounded.startswith(b"(") or rounded.count(b"),(") != n - 1:
        return None
    if shape == b"(,)," * n and rounded.endswith(b"),"):
        b = b[:-1]  # the trailing comma
    elif shape != b"(,)," * (n - 1) + b"(,)" or not rounded.endswith(b")"):
        return None
    try:
        values = list(map(float, b.translate(None, b"()[]").split(b",")))
    except ValueError:
        return None
    brackets = raw.translate(None, _NOT_BRACKET)  # opening, closing, opening, closing, …
    if brackets[0::2].translate(_CLOSE_OF_BYTES) != brackets[1::2]:
        return None
    return values[0::2], values[1::2]


def letter_at(text: str, pos: int = 0) -> tuple[str, int] | None:
    """An option letter read at ``pos``: whitespace, an optional ``(``, one of A–Z, an optional ``)``, then the
    end, whitespace, ``.``, ``:`` or ``,``. Returns ``(letter, its index)``; None otherwise.

    ``"B"``, ``" (C) "``, ``"D. a dog"`` read; ``"Bob"``, ``"B)x"``, ``"b"`` do not (see
    :func:`zoomzero_plugin.answers.extract_letter` for the lower-case fallback).
    """
    n = len(text)
    i = skip_space(text, pos)
    if i < n and text[i] == "(":
        i += 1
    if i >= n or not ("A" <= text[i] <= "Z"):
        return None
    at, i = i, i + 1
    if i < n and text[i] == ")":
        i += 1
    if i == n or text[i].isspace() or text[i] in ".:,":
        return text[at], at
    return None
