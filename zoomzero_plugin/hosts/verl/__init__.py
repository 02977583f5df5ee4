"""The verl host: zoomzero-plugin as a verl (>= 0.9) plugin. The only package that touches verl's internals.

verl loads it by itself in every process (entry point ``verl.plugins`` -> :mod:`.plugin`), and vLLM's own processes
load :mod:`.vllm_plugin` (``vllm.general_plugins``). Its modules, bottom to top: ``cpu_mode`` (CPU mode's switches
and Ray's resources), ``rows`` (verl's row layout, a trajectory's fields), ``options`` (the recipe's ``zoomzero``
section), ``rope`` (clip timing in verl's position ids), ``vllm_video`` (clip timing in vLLM's processor), ``bugs``,
``cpu_seams``, ``sampled_vocab`` (the actor's log-probs over the vocabulary vLLM samples), ``sampler_check`` (step
metrics), ``tokenadv`` (the estimators and their trainer seam) -> ``seams`` (the table) -> ``cpu_platform``,
``ray_watch`` -> ``zoom_loop`` and ``videozoomer_loop`` (the agent loops), ``reward`` (the reward managers) ->
``plugin``, ``vllm_plugin``; ``recipe`` (compose and check a recipe) -> ``cli`` (``zoomzero verl train``); ``doctor``
(``zoomzero verl doctor``: every seam's state). Nothing here is imported by the core, the methods or the EasyR1 host.
"""

from zoomzero_plugin.lazy import lazy_names

_NAMES = {"TABLE": "seams", "recipe_options": "options", "requested": "cpu_mode", "verl_rows": "rows"}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)
__all__ = sorted(_NAMES)
