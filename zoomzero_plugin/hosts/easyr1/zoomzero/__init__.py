"""zoomzero-plugin's own EasyR1 plugin: one wing of the plugin host, loaded through its entry point like any other.

- :mod:`.plugin` — the hook implementations (entry point ``easyr1.plugins: zoomzero``): the reward name
  ``zoomzero:gvqa``, the estimator ``tokenadv``, the ``zoom`` rollout hook and their config and row checks.
- :mod:`.options` — the ``zoom`` and ``tokenadv`` sections of ``worker.reward.reward_function_kwargs``.
- :mod:`.tokenadv` — TokenAdv (Zoom-Zero Eq. 4–5) as an EasyR1 advantage estimator.
- :mod:`.zoom_hook` — the zoom-in pass after each rollout (Zoom-Zero §4.1–4.2).

Imports run one way: this wing uses the host (``hookspecs``, ``batch_step``, ``clips``, ``reward_extras``,
``recipe``) and the host never imports it.
"""
