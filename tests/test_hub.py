"""Where a model comes from, found at once (zoomzero_plugin.hub.locate): a folder, the local Hugging Face cache, or
one request to the Hub; never the Hub client's retries. No real network: a local endpoint that drops every
connection stands for a machine without one, and counts the requests."""

import huggingface_hub.constants as hub
import pytest

from zoomzero_plugin.errors import ModelError
from zoomzero_plugin.hub import CACHE, FOLDER, locate

from .helpers import no_network


@pytest.fixture
def online(monkeypatch, tmp_path):
    """The Hub switched on (the suite runs with HF_HUB_OFFLINE=1), an empty cache, the endpoint dropping connections."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "cache"))
    with no_network() as (endpoint, connections):
        monkeypatch.setattr(hub, "ENDPOINT", endpoint)
        yield endpoint, connections


def test_an_unreachable_hub_is_said_after_one_request(online):
    endpoint, connections = online
    with pytest.raises(ModelError) as e:
        locate("org/not-here", timeout=5)
    assert str(e.value) == (
        f"no such folder, and the Hugging Face Hub ({endpoint}) cannot be reached (no connection); without network, "
        "pass a local model folder"
    )
    assert connections() == 1  # one request, no retry


def test_a_cached_hub_id_and_a_folder_need_no_network(online, tmp_path, tiny_model_dir):
    _, connections = online
    snapshot = tmp_path / "cache" / "models--org--cached" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "cache" / "models--org--cached" / "refs").mkdir()
    (tmp_path / "cache" / "models--org--cached" / "refs" / "main").write_text("abc123")
    assert locate("org/cached") == CACHE and locate(str(tiny_model_dir)) == FOLDER
    assert connections() == 0


def test_offline_a_hub_id_not_cached_is_said_without_a_request(online, monkeypatch):
    _, connections = online
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="not in the local Hugging Face cache while HF_HUB_OFFLINE is set"):
        locate("org/not-here")
    assert connections() == 0
