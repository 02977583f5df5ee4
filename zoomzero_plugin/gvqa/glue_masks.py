"""Which generated tokens are grounding tokens: the core's token masker over Zoom-Zero's ``<glue>…</glue>`` blocks."""

from __future__ import annotations

from typing import Any

from ..token_masks import TokenMasker
from .parsing import glue_char_ranges


class GlueTokenMasker(TokenMasker):
    """(bs, L) masks of the tokens of every ``<glue>…</glue>`` block, tags included (an unclosed last block runs to
    the end of its turn): :class:`~zoomzero_plugin.token_masks.TokenMasker` with
    :func:`~zoomzero_plugin.gvqa.parsing.glue_char_ranges`."""

    def __init__(self, tokenizer: Any, skip_special_tokens: bool = False):
        super().__init__(tokenizer, glue_char_ranges, skip_special_tokens)
