"""Settings and fixtures every test shares."""

import os
import shutil
import sys
import tempfile

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist runs more workers than cores (pytest_xdist_auto_num_workers below): torch's
    # default of a thread per core in every worker would put several busy threads on each
    # core, and its threads spin while they wait for each other (measured under load: 2.4x
    # the CPU time of one thread for tests/test_local_sampling.py). One thread per worker,
    # unless set otherwise.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): half as many workers again as cores (3 on 2 cores). A
    worker waits a share of its time (CLI and scan processes starting, sandboxed runs up to
    their timeouts, a real HTTP server, Chromium), which the extra worker fills. Measured on 2
    cores with 0.2 cores of other work, one after the other: `-n 2` 86.9 s wall and 122.3 s of
    CPU, `-n 3` 75.6 s and 121.6 s, `-n 4` 82.5 s and 140.6 s: two per core cost more CPU
    than they fill (docs/performance.md#the-test-suite)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores + max(1, cores // 2)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Nothing may be downloaded: every model a test loads is a local folder it made."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def pytest_configure(config):
    """One content cache for the whole run (`cloneprobe.content_cache`), never the user's: the
    first command computes the canonical fragments, profiles and chance rates, the rest read
    them. Set before collection (a test module may build `CanonicalFragments` when imported)
    by the process that starts the run; pytest-xdist's workers inherit it and share the folder
    (entries are written atomically). Tests of the cache itself give their own folders, cold."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    # Python's bytecode caches (`__pycache__`, ignored by git) are written even where
    # PYTHONDONTWRITEBYTECODE is set: without them every worker compiles the project's modules
    # and pytest rewrites every test module again, and so does every CLI process a test starts
    # (docs/performance.md#the-test-suite). The workers and their processes inherit this.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False  # this process too, when it runs the tests (`-n 0`)
    folder = tempfile.mkdtemp(prefix="cloneprobe-test-cache-")
    os.environ["CLONEPROBE_CACHE_DIR"] = folder
    os.environ.pop("CLONEPROBE_NO_CACHE", None)
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


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


LOCAL_MODEL_FIXTURES = {"model_path", "tokenizer", "chat_model"}


def builds_a_local_model(item) -> bool:
    """Whether a test builds or loads a tiny transformers model (a model fixture, or a module
    that needs torch to be collected at all)."""
    module = getattr(item, "module", None)
    return bool(LOCAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ()))) or (
        module is not None and "torch" in vars(module)
    )


@pytest.hookimpl(trylast=True)  # after `-m` has deselected
def pytest_collection_modifyitems(config, items):
    """The fast tests of the modules with a fast local-model test run first, each module's in
    their order. pytest-xdist's worksteal gives each worker a contiguous share of this order
    and steals from the end of a share, so they stay on the first worker: the model classes
    load (about 3.5 s of CPU the first time a process builds a model) and the session's tiny
    model is built in that worker only, not in each. Slow tests keep their place, so that the
    long ones of the whole suite still spread over the workers."""

    def fast(item) -> bool:
        return item.get_closest_marker("slow") is None

    first = {item.module for item in items if fast(item) and builds_a_local_model(item)}
    items.sort(key=lambda item: not (fast(item) and getattr(item, "module", None) in first))
