"""Where a model named by a folder or a Hugging Face Hub id comes from, found at once.

:func:`locate` answers ``"folder"``, ``"cache"`` or ``"hub"``, or raises :class:`~.errors.ModelError` saying why
the model cannot be loaded here. It never waits on the Hub client's retries (about 30 s of them for one missing
file on a machine without network, and each loader asks for several files): a folder and a hub id in the local
cache need no network at all, and any other hub id costs one request of at most ``timeout`` seconds.
``zoomzero eval`` checks its ``--model`` with it, ``easyr1 train`` (and ``--dry-run``) the recipe's model path.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ModelError

FOLDER, CACHE, HUB = "folder", "cache", "hub"
_TRUE = ("1", "ON", "YES", "TRUE")


def offline() -> bool:
    """Whether the Hub is switched off for this process (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    import huggingface_hub.constants as hub

    flags = (os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("TRANSFORMERS_OFFLINE", ""))
    return bool(hub.HF_HUB_OFFLINE) or any(f.strip().upper() in _TRUE for f in flags)


def looks_like_path(model: str) -> bool:
    """A name that can only be a path, never a hub id (``org/name``)."""
    return (
        model.startswith(("/", "./", "../", "~", ".\\"))
        or model.count("/") > 1
        or "\\" in model
        or model in (".", "..")
    )


def _in_cache(model: str) -> bool | None:
    """Whether the local Hugging Face cache holds the hub id's ``config.json``; None for a name that is no hub id."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except HFValidationError:
        return None


def cached(model: str) -> bool:
    """Whether ``model`` is a hub id whose ``config.json`` the local Hugging Face cache holds."""
    return bool(_in_cache(model))


def locate(model: str, timeout: float = 10.0) -> str:
    """Where ``model`` loads from: :data:`FOLDER` (a folder holding ``config.json``), :data:`CACHE` (a hub id in
    the local cache: it loads offline too) or :data:`HUB` (a hub id the Hub knows). Raises ModelError with the
    reason otherwise, the model's name left to the caller: a file, a folder without ``config.json``, a path that
    does not exist, a name that is no hub id, a hub id not cached while offline, unknown, gated, or a Hub that does
    not answer (one request, ``timeout`` seconds)."""
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError("a file; expected a model folder (config.json, weights, processor files)")
        if not (path / "config.json").is_file():
            raise ModelError("this folder has no config.json: not a Hugging Face model folder")
        return FOLDER
    if looks_like_path(model):
        raise ModelError("no such folder")
    hit = _in_cache(model)
    if hit is None:
        raise ModelError("no such folder, and not a hub id (org/name)")
    if hit:
        return CACHE
    if offline():
        raise ModelError(
            "no such folder, and not in the local Hugging Face cache while HF_HUB_OFFLINE is set; download it "
            f"first (huggingface-cli download {model}) or pass its folder"
        )
    _ask_the_hub(model, timeout)
    return HUB


def _ask_the_hub(model: str, timeout: float) -> None:
    """One request for the model's card: ModelError when the Hub says no or does not answer."""
    import huggingface_hub.constants as hub
    import requests
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    try:
        HfApi().model_info(model, timeout=timeout)
    except GatedRepoError:
        raise ModelError("a gated model: accept its licence on the hub and log in (huggingface-cli login)") from None
    except RepositoryNotFoundError:
        raise ModelError(
            "no such folder, and no such model on the Hugging Face Hub (or it is private: log in)"
        ) from None
    except (requests.RequestException, OSError) as e:
        if isinstance(e, requests.Timeout):
            reason = f"no answer in {timeout:g} s"
        else:
            reason = "no connection" if isinstance(e, requests.ConnectionError) else type(e).__name__
        raise ModelError(
            f"no such folder, and the Hugging Face Hub ({hub.ENDPOINT}) cannot be reached ({reason}); without "
            "network, pass a local model folder"
        ) from None
