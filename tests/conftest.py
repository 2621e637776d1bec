"""Settings every test shares."""

import pytest


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Nothing may be downloaded: every model a test loads is a local folder it made."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
