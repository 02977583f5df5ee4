"""A multi-turn conversation as its raw token ids and media: what a multi-turn rollout builds turn by turn and
:func:`~.multiturn.assemble` lays out for EasyR1.

A conversation is a first prompt and a response made of pieces (:class:`Piece`): turns the policy sampled, and tokens
it did not (observations: a tool's text and images, the turn markers around them). Raw ids are as the engine reads
them: an image is one placeholder token standing for ``h · w`` tokens
(:func:`~zoomzero_plugin.vision.merged_grid`), a video one placeholder
run standing for its :class:`VideoLayout`'s ids. :class:`SegmentEncoder` encodes many similar turns fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zoomzero_plugin.token_masks import encode_rows


@dataclass(frozen=True)
class VideoLayout:
    """How one video of a piece stands in the token sequence: ``placeholder``, the raw ids that name it (as the
    engine reads them), become ``ids`` (what the engine expands them to), whose vision blocks are ``blocks``:
    ``(offset in ids, t, h, w)`` with ``times`` (the ``t`` temporal offsets of each block, M-RoPE's time axis)."""

    placeholder: tuple[int, ...]
    ids: tuple[int, ...]
    blocks: tuple[tuple[int, int, int, int], ...]
    times: tuple[tuple[int, ...], ...]

    @property
    def extra(self) -> int:
        """Tokens the expansion adds."""
        return len(self.ids) - len(self.placeholder)


@dataclass
class Piece:
    """A run of raw token ids (each image one placeholder token) that the policy sampled or did not.

    ``images``: the media of the piece's image placeholders, in order (anything EasyR1's ``process_image`` reads,
    e.g. a frame reference); ``grids``: each image's merged-patch grid ``(h, w)``, so its placeholder stands for
    ``h · w`` tokens; ``videos`` and ``layouts``: the media of its video placeholders (anything EasyR1's
    ``process_video`` reads) and how each expands (:class:`VideoLayout`); ``logprobs``: the sampler's log-prob of
    each token of a sampled piece.
    """

    ids: list[int]
    sampled: bool
    images: list[Any] = field(default_factory=list)
    grids: list[tuple[int, int]] = field(default_factory=list)
    logprobs: list[float] | None = None
    videos: list[Any] = field(default_factory=list)
    layouts: list[VideoLayout] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.images) != len(self.grids):
            raise ValueError(f"{len(self.images)} images but {len(self.grids)} grids")
        if len(self.videos) != len(self.layouts):
            raise ValueError(f"{len(self.videos)} videos but {len(self.layouts)} video layouts")
        if self.logprobs is not None and len(self.logprobs) != len(self.ids):
            raise ValueError(f"{len(self.logprobs)} log-probs for {len(self.ids)} tokens")
        if self.videos and self.sampled:
            raise ValueError("a sampled piece holds no video")

    @property
    def tokens(self) -> int:
        """Tokens after expansion (each image placeholder becomes ``h · w`` tokens, each video its layout's ids)."""
        return len(self.ids) + sum(h * w - 1 for h, w in self.grids) + sum(v.extra for v in self.layouts)

    def video_expanded(self) -> tuple[list[int], list[tuple[int, int, int, int]], list[tuple[int, ...]]]:
        """The ids with every video placeholder replaced by its layout's ids (images still one token each), and the
        video blocks: ``(start in those ids, t, h, w)`` and their temporal offsets. ValueError when the ids do not
        hold the videos' placeholders in order."""
        out: list[int] = []
        blocks, times = [], []
        pos = 0
        for layout in self.layouts:
            at = _find(self.ids, layout.placeholder, pos)
            if at < 0:
                raise ValueError(f"a piece holds {len(self.videos)} videos but not their placeholders in order")
            out += self.ids[pos:at]
            blocks += [(len(out) + offset, t, h, w) for offset, t, h, w in layout.blocks]
            times += list(layout.times)
            out += layout.ids
            pos = at + len(layout.placeholder)
        return out + self.ids[pos:], blocks, times


def _find(ids: Sequence[int], pattern: Sequence[int], start: int) -> int:
    """Index of the first occurrence of ``pattern`` in ``ids`` at or after ``start`` (-1: none)."""
    k = len(pattern)
    for i in range(start, len(ids) - k + 1):
        if ids[i] == pattern[0] and list(ids[i : i + k]) == list(pattern):
            return i
    return -1


class Conversation:
    """A first prompt (never sampled) and the response's pieces in order (add them with :meth:`append`)."""

    def __init__(self, prompt: Piece, pieces: Sequence[Piece] = ()):
        self.prompt, self.response = prompt, []
        self._raw, self._images, self._videos = list(prompt.ids), list(prompt.images), list(prompt.videos)
        self.response_tokens = 0  # response length after expansion
        for piece in pieces:
            self.append(piece)

    def append(self, piece: Piece) -> None:
        self.response.append(piece)
        self._raw += piece.ids
        self._images += piece.images
        self._videos += piece.videos
        self.response_tokens += piece.tokens

    def raw_ids(self) -> list[int]:
        """Prompt and response so far, as the engine reads them (one token per image). Do not modify it."""
        return self._raw

    def images(self) -> list[Any]:
        """The images so far, in order. Do not modify it."""
        return self._images

    def videos(self) -> list[Any]:
        """The videos so far, in order. Do not modify it."""
        return self._videos

    def media(self) -> dict[str, list[Any]]:
        """``multi_modal_data`` of the conversation so far: its images, and its videos when it has any."""
        return {"images": self._images, "videos": self._videos} if self._videos else {"images": self._images}


class SegmentEncoder:
    """``tokenizer.encode(text, add_special_tokens=False)`` for many similar texts: the text between special tokens
    is encoded once per distinct segment (a fast tokenizer splits on its special tokens before anything else, so
    segments never merge across them), and checked against the full encoding of the first text it sees.

    Observation turns repeat the same instructions around different frame labels: most segments are cached.
    The cache holds at most ``max_cached_ids`` ids (emptied when a call would pass it): a run's first prompts
    are all distinct, and a cache that only grew would hold every question of the data set.
    """

    def __init__(self, tokenizer: Any, max_cached_ids: int = 1 << 22):
        self.tokenizer = tokenizer
        added = getattr(tokenizer, "added_tokens_encoder", {}) or {}  # every token it splits on before encoding
        self.specials = {s: int(i) for s, i in added.items() if s}
        self.max_cached_ids = max_cached_ids
        self._cache: dict[str, list[int]] = {}
        self._cached_ids = 0
        self._checked: bool | None = None  # None: not yet compared with the full encoding

    def _split(self, text: str) -> list[str | int]:
        """Text segments and special token ids, in order: leftmost special first (on a tie, the first in
        ``specials``), matches never overlapping. Linear: one ``find`` per special per occurrence."""
        hits = []
        for rank, (s, token) in enumerate(self.specials.items()):
            i = text.find(s)
            while i >= 0:
                hits.append((i, rank, len(s), token))
                i = text.find(s, i + 1)
        if not hits:
            return [text] if text else []
        hits.sort()
        out: list[str | int] = []
        pos = 0
        for i, _, size, token in hits:
            if i < pos:  # inside the special before it
                continue
            if i > pos:
                out.append(text[pos:i])
            out.append(token)
            pos = i + size
        if pos < len(text):
            out.append(text[pos:])
        return out

    def __call__(self, texts: Sequence[str]) -> list[list[int]]:
        split = [self._split(t) for t in texts]
        known = self._cache
        missing = list({p for parts in split for p in parts if isinstance(p, str) and p not in known})
        if missing:
            encoded = encode_rows(self.tokenizer, missing)
            new, added = dict(zip(missing, encoded)), sum(map(len, encoded))
            if self._cached_ids + added > self.max_cached_ids:  # emptied; this call still reads the old entries
                known = {**self._cache, **new}
                self._cache, self._cached_ids = {}, 0
            self._cache.update(new)
            self._cached_ids += added
        out = []
        for parts in split:
            ids: list[int] = []
            for p in parts:
                if isinstance(p, str):
                    ids += known[p]
                else:
                    ids.append(p)
            out.append(ids)
        if self._checked is None and texts:
            self._checked = out[0] == self.tokenizer.encode(texts[0], add_special_tokens=False)
        if not self._checked:  # a tokenizer that merges across its special tokens: encode whole texts
            return [self.tokenizer.encode(t, add_special_tokens=False) for t in texts]
        return out
