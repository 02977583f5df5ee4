"""Data tools over both methods: converters of benchmark annotations into rows (``formats/``, ``zoomzero data
convert``), row checks (``data check``), offline filtering (``data filter``) and VideoZoomer's cold-start SFT export
(``sft/``, ``data export-sft``); :mod:`.pipeline` turns a format's drafts into rows. Names load their modules on
first use."""

from ..lazy import lazy_names

_NAMES = {
    **dict.fromkeys(("FORMATS", "Draft", "Format", "Skip"), "formats"),
    **dict.fromkeys(("check_row", "probe_video"), "check"),
    **dict.fromkeys(("FilterConfig", "decide", "filter_rows"), "filter"),
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)
