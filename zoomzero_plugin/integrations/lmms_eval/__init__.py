"""zoomzero in lmms-eval: the inference modes as lmms-eval's ``zoomzero`` model, the grounded-QA benchmarks as tasks.

- :mod:`.manifest`: the ``lmms_eval.models`` entry point (installing this package registers the model);
- :mod:`.model`: the model (imports lmms-eval); its ``--model_args`` are ``zoomzero eval``'s options
  (:mod:`.model_args`) and it reads each request as :mod:`.questions` says;
- :mod:`.task_folder`: ``zoomzero lmms-eval tasks`` writes task YAMLs over dataset rows; :mod:`.task` holds the
  functions they name (official metrics from the answer and spans each reply cites).

Only :mod:`.model` and :func:`.manifest.manifest` import lmms-eval. lmms-eval imports this package whenever it builds
its model registry (any ``lmms-eval`` run), so every name here loads its module on first use. The model class itself
(``model.ZoomZero``) is not a name here: lmms-eval loads it by its path (:data:`.manifest.CLASS_PATH`), and it needs
lmms-eval installed.
"""

from ...lazy import lazy_names

_NAMES = {
    "MODEL_ID": "manifest",
    **dict.fromkeys(("ModelArgs", "parse_model_args"), "model_args"),
    **dict.fromkeys(("ask", "lettered_options", "reply"), "questions"),
    **dict.fromkeys(("TASKS", "write_tasks"), "task_folder"),
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)
