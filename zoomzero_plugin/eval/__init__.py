"""Evaluation over both methods: the benchmark runner (``zoomzero eval``), each benchmark's official metrics,
``zoomzero score`` for any system's predictions, reports, plots and submission files. Names load their modules on
first use."""

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

__all__ = [
    "Prediction",
    "aggregate",
    "evaluate",
    "get_benchmark",
    "read_predictions",
    "score_predictions",
    "score_questions",
    "truths_from_rows",
    "write_report",
]
