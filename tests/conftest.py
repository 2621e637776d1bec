"""Settings and fixtures every test shares."""

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist runs one worker per core (pyproject's addopts): torch's default of a thread
    # per core in every worker would put twice as many busy threads as cores, and its threads
    # spin while they wait for each other (measured under load: 2.4x the CPU time of one
    # thread for tests/test_local_sampling.py). One thread per worker, unless set otherwise.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Nothing may be downloaded: every model a test loads is a local folder it made."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def wide_output(monkeypatch):
    """Piped output is 80 columns unless `COLUMNS` says otherwise; tests that look for a whole
    sentence read it unwrapped (test_first_contact checks the widths, the 80 default included)."""
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture(scope="session")
def tokenizer():
    """The tiny trained tokenizer of test_transformers_backend (built once per run)."""
    from test_transformers_backend import train_tokenizer

    return train_tokenizer()


@pytest.fixture(scope="session")
def model_path(tmp_path_factory, tokenizer) -> str:
    """A folder holding the tiny random-weight Llama and its tokenizer; tests only read it."""
    from test_transformers_backend import save, tiny_llama

    return save(tmp_path_factory.mktemp("tiny-llama"), tokenizer, tiny_llama(tokenizer))
