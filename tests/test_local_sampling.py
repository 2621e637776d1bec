"""Seeded local sampling: a sample depends on its seed, index, temperature and prompt only.

The tiny random-weight Llama of test_transformers_backend runs the real decoding loop (prefill,
cache, sequences leaving the batch, one random stream per sample).
"""

from __future__ import annotations

import pytest
from local_extra import Deferred, skip_without_the_local_extra, torch

skip_without_the_local_extra()

from click.testing import CliRunner
from test_transformers_backend import (
    CHAT_TEMPLATE,
    HUMANEVAL,
    PROMPTS,
    generate,
    request,
    save,
    texts_by_key,
    tiny_llama,
    train_tokenizer,
)

from cloneprobe.cli.main import main
from cloneprobe.generation import SampleStore

# imported by the first test that uses them: they import torch
decoding = Deferred("cloneprobe.generation.backends.decoding")
transformers_backend = Deferred("cloneprobe.generation.backends.transformers_backend")


def sampled_requests(order: list[int]):
    return [
        request(PROMPTS[i], key=i, n=3, temperature=1.0, max_new_tokens=14, seed=11) for i in order
    ]


def test_seeded_samples_are_the_same_whatever_the_batch_size_and_task_order(model_path):
    alone = texts_by_key(
        generate(
            transformers_backend.TransformersBackend(model_path, batch_size=1),
            sampled_requests([0, 1, 2]),
        )
    )
    batched = texts_by_key(
        generate(
            transformers_backend.TransformersBackend(model_path, batch_size=4),
            sampled_requests([2, 0, 1]),
        )
    )
    wide = texts_by_key(
        generate(
            transformers_backend.TransformersBackend(model_path, batch_size=9),
            sampled_requests([1, 2, 0]),
        )
    )
    assert alone == batched == wide
    for texts in alone.values():
        assert len(set(texts)) > 1  # it samples: a task's three samples differ


def test_sample_k_of_a_request_is_the_sample_of_seed_plus_k(model_path):
    backend = transformers_backend.TransformersBackend(model_path, batch_size=2)
    (three,) = generate(
        backend, [request(PROMPTS[0], n=3, temperature=1.0, max_new_tokens=14, seed=4)]
    )
    (third,) = generate(
        backend, [request(PROMPTS[0], n=1, temperature=1.0, max_new_tokens=14, seed=6)]
    )
    assert three.texts[2] == third.texts[0]
    assert three.texts[0] != third.texts[0]


def test_the_sample_seed_differs_by_index_temperature_and_prompt():
    seeds = {
        decoding.sequence_seed(1, 0.8, "a"),
        decoding.sequence_seed(2, 0.8, "a"),
        decoding.sequence_seed(1, 0.2, "a"),
        decoding.sequence_seed(1, 0.8, "b"),
    }
    assert len(seeds) == 4
    assert decoding.sequence_seed(1, 0.8, "a") == decoding.sequence_seed(1, 0.8, "a")


def test_nucleus_sampling_draws_only_from_the_top_p_mass_by_inverse_transform():
    logits = torch.log(torch.tensor([[0.2, 0.5, 0.3], [0.2, 0.5, 0.3], [0.2, 0.5, 0.3]]))
    uniforms = torch.tensor([0.0, 0.6, 0.999])
    # top_p 0.6: the nucleus is {1 (0.5), 2 (0.3)}, renormalised to 0.625 / 0.375
    assert decoding.sample_tokens(logits, 1.0, 0.6, uniforms).tolist() == [1, 1, 2]
    # top_p 1: all three (cumulative 0.5, 0.8, 1): 0.6 draws token 2, 0.999 token 0
    assert decoding.sample_tokens(logits, 1.0, 1.0, uniforms).tolist() == [1, 2, 0]
    assert decoding.sample_tokens(logits, 0.0, 1.0, uniforms).tolist() == [1, 1, 1]  # greedy


def generate_cli(tmp_path, model: str, store) -> None:
    result = CliRunner().invoke(
        main,
        ["generate", "--model", f"hf:{model}", "--limit", "1", "-n", "1",
         "--max-new-tokens", "4", "--prompts", "original", "--temperature", "0",
         "--store", str(store)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("templated", [True, False])
def test_a_local_model_is_asked_in_chat_mode_when_its_tokenizer_has_a_chat_template(
    tmp_path, templated
):
    tokenizer = train_tokenizer()
    if templated:
        tokenizer.chat_template = CHAT_TEMPLATE
    model = save(tmp_path / "model", tokenizer, tiny_llama(tokenizer))
    store = tmp_path / "store.sqlite"
    generate_cli(tmp_path, model, store)
    expected = "chat" if templated else "completion"
    with SampleStore(store) as opened:
        (run,) = opened.runs()
        (sample,) = list(opened.samples())
    assert run["settings"]["mode"] == expected  # the run records which
    assert run["settings"]["chat_template"] is templated
    assert sample.mode == expected
    assert sample.task_id == HUMANEVAL.tasks[0].task_id
