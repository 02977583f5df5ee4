"""zoomzero-plugin's own EasyR1 plugin: one wing of the plugin host, loaded through its entry point like any other.

- :mod:`.plugin` — the hook implementations (entry point ``easyr1.plugins: zoomzero``): the reward names
  ``zoomzero:gvqa`` and ``zoomzero:videozoomer``, the estimators, the ``zoom`` rollout hook, the ``videozoomer``
  rollout, ``MODEL_SEQ_LEN``, and the dry run's view of their settings.
- :mod:`.options` — a recipe's sections of ``worker.reward.reward_function_kwargs`` (``zoom``, ``tokenadv``,
  ``agent`` and the reward's own), read once into one options object per config.
- :mod:`.checks` — the recipe check, one function per feature, and the checks of the first rows.
- :mod:`.tokenadv` — TokenAdv (Zoom-Zero Eq. 4–5) and its GRPO baseline ``grpo_sum`` as EasyR1 advantage estimators.
- :mod:`.zoom_hook` — the zoom-in pass after each rollout (Zoom-Zero §4.1–4.2).
- :mod:`.agent_rollout` — the VideoZoomer multi-turn rollout in each rollout worker; :mod:`.clip_videos` — a call's
  clip as one video (``agent.clip_as: video``).

Imports run one way: this wing uses the host (``hookspecs``, ``batch_step``, ``clips``, ``reward_extras``,
``recipe``, ``multiturn``, ``frame_refs``, ``generation``) and the host never imports it.
"""
