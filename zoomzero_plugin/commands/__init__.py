"""The ``zoomzero`` command line and the demos: the top of the package, over the tools and both methods (nothing
imports them).

- :mod:`.cli`: ``zoomzero``, the console script; each subcommand lives in its tool's module (``eval``, ``data …``,
  ``score``, ``lmms-eval tasks``) or here (``demo``, ``recipes``), imported only when used;
- :mod:`.demo`: ``zoomzero demo``, one Zoom-Zero training step's rewards and advantages on a tiny random model;
- :mod:`.agent_demo`: ``zoomzero demo --agent``, VideoZoomer's ``<video_zoom>`` loop on a tiny random model;
- :mod:`.train_demo`: ``zoomzero demo --train``, a shipped recipe trained for a few steps on a tiny warm-started model
  through ``easyr1 train --cpu``, then merged and evaluated;
- :mod:`.recipes`: ``zoomzero recipes``, the shipped recipes and examples listed and copied out.
"""

from ..lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, {"main": "cli"})

__all__ = ["main"]
