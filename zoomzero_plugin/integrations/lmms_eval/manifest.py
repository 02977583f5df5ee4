"""The ``lmms_eval.models`` entry point: lmms-eval loads :func:`manifest` when it builds its model registry.

Installing zoomzero-plugin next to lmms-eval is all it takes: ``lmms-eval --model zoomzero …`` resolves to
:class:`~zoomzero_plugin.integrations.lmms_eval.model.ZoomZero`, imported only when that model is asked for.
"""

from __future__ import annotations

MODEL_ID = "zoomzero"
CLASS_PATH = "zoomzero_plugin.integrations.lmms_eval.model.ZoomZero"


def manifest():
    """lmms-eval's ``ModelManifest`` for ``zoomzero`` (a simple model: ``generate_until`` over its requests)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id=MODEL_ID, simple_class_path=CLASS_PATH)
