"""Evaluation over both methods:

- :mod:`.runner` (``zoomzero eval``: resumable predictions, then metrics, report and plots), :mod:`.score`
  (``zoomzero score`` for any system's predictions), :mod:`.predictions` (the records' format);
- :mod:`.metrics` (each benchmark's official metrics), :mod:`.reductions` (how several predicted spans are measured),
  :mod:`.agent_stats` (tool statistics of agent predictions);
- :mod:`.report` (``metrics.json``, ``report.md``), :mod:`.plots`, :mod:`.submission` (test-split files).

Names load their modules on first use.
"""

from ..lazy import lazy_names

_NAMES = {
    "evaluate": "runner",
    **dict.fromkeys(
        ("aggregate", "get_benchmark", "score_predictions", "score_questions", "truths_from_rows"), "metrics"
    ),
    **dict.fromkeys(("Prediction", "read_predictions"), "predictions"),
    "write_report": "report",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)
