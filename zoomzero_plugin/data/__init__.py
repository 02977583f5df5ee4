"""Dataset converters (``formats/``, ``zoomzero data convert``), row checks (``data check``) and offline filtering (``data filter``)."""
