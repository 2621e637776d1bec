"""The transformers backend on a tiny Llama with random weights that the tests build offline.

A byte-level BPE tokenizer is trained in memory on HumanEval prompt text; the model (2 layers,
hidden size 32) is saved with `save_pretrained` and loaded back through the backend, so the
real loading, batching, sampling and decoding code runs. The embedded SmolLM2 GGUF model is
exercised by one slow test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from local_extra import Deferred, skip_without_the_local_extra, torch, transformers

skip_without_the_local_extra()


from cloneprobe.benchmarks import PromptSet, load_humaneval, load_prompt_set
from cloneprobe.generation import (
    BackendOptions,
    GenerationError,
    Plan,
    SampleStore,
    SamplingSettings,
    make_backend,
    parse_model_spec,
    run_plan,
)
from cloneprobe.generation.backends import GenerationRequest, local_sampling_defaults
from cloneprobe.generation.postprocess import chat_message

# imported by the first test that uses them: they import torch
transformers_backend = Deferred("cloneprobe.generation.backends.transformers_backend")

HUMANEVAL = load_humaneval()
PROMPTS = [task.prompt for task in HUMANEVAL.tasks[:3]]
EOS = "<|endoftext|>"
CHAT_TEMPLATE = (
    "{% for message in messages %}<user>{{ message['content'] }}</user>{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)


def train_tokenizer():
    """A byte-level BPE tokenizer trained on a few hundred lines of HumanEval prompts."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    lines = [line for task in HUMANEVAL.tasks for line in task.prompt.splitlines()][:600]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token=EOS, pad_token=EOS
    )


def tiny_llama(tokenizer, always: int | None = None):
    """LlamaForCausalLM, hidden 32, 2 layers, 2 heads, random weights (seed 0).

    With `always`, the weights are set so that every position predicts that token id: the
    layers add nothing to the residual stream, every embedding is the same vector, and only
    the `always` row of the output head is non-zero.
    """
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=64,
        max_position_embeddings=1024,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    if always is not None:
        with torch.no_grad():
            model.model.embed_tokens.weight.fill_(1.0)
            for layer in model.model.layers:
                layer.self_attn.o_proj.weight.zero_()
                layer.mlp.down_proj.weight.zero_()
            model.lm_head.weight.zero_()
            model.lm_head.weight[always] = 1.0
    return model


def save(folder: Path, tokenizer, model) -> str:
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def backend(model_path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        loaded = transformers_backend.TransformersBackend(model_path, batch_size=4)
    yield loaded
    loaded.close()


def request(prompt: str, key: object = 0, **overrides) -> GenerationRequest:
    fields = {
        "key": key,
        "prompt": prompt,
        "n": 1,
        "temperature": 0.0,
        "top_p": 0.95,
        "max_new_tokens": 12,
        "stop": (),
        "mode": "completion",
        "seed": None,
    }
    return GenerationRequest(**(fields | overrides))


def generate(backend, requests) -> list:
    results = []
    backend.generate(requests, results.append)
    return results


def texts_by_key(results) -> dict:
    return {result.request.key: result.texts for result in results}


# --- generating ----------------------------------------------------------------------------


def test_requests_spanning_several_batches_each_get_one_result_with_n_texts(backend, tokenizer):
    # 3 prompts x n=3 = 9 sequences in batches of 4: the middle batch mixes two requests.
    requests = [
        request(p, key=i, n=3, temperature=0.8, max_new_tokens=10, seed=1)
        for i, p in enumerate(PROMPTS)
    ]
    results = generate(backend, requests)
    assert sorted(r.request.key for r in results) == [0, 1, 2]
    for result in results:
        assert result.error is None
        assert len(result.texts) == 3
        assert all(isinstance(text, str) for text in result.texts)
        assert len(result.finish_reasons) == 3
        assert set(result.finish_reasons) <= {"stop", "length"}
        assert 0 < result.completion_tokens <= 10 * 3
        prompt_length = len(tokenizer(result.request.prompt)["input_ids"])
        assert result.prompt_tokens == 3 * prompt_length  # padding is not counted
        assert result.latency > 0


def test_requests_with_different_settings_in_one_call_all_get_their_result(backend):
    requests = [
        request(PROMPTS[0], key="greedy", n=2, max_new_tokens=6),
        request(PROMPTS[1], key="sampled", n=3, temperature=0.7, max_new_tokens=9, seed=0),
        request(PROMPTS[2], key="short", n=1, max_new_tokens=3),
    ]
    results = {r.request.key: r for r in generate(backend, requests)}
    assert {key: len(r.texts) for key, r in results.items()} == {
        "greedy": 2,
        "sampled": 3,
        "short": 1,
    }
    assert results["short"].completion_tokens <= 3
    assert results["sampled"].completion_tokens <= 27


def test_temperature_zero_is_greedy_and_deterministic(backend):
    requests = [request(p, key=i, n=2, max_new_tokens=12) for i, p in enumerate(PROMPTS[:2])]
    first = texts_by_key(generate(backend, requests))
    second = texts_by_key(generate(backend, requests))
    assert first == second
    for texts in first.values():
        assert texts[0] == texts[1]  # greedy: every sample of a prompt is the same
        assert texts[0]


def test_a_seed_makes_sampling_reproducible(backend):
    def sampled(seed: int) -> list[str]:
        (result,) = generate(
            backend, [request(PROMPTS[0], n=3, temperature=1.0, max_new_tokens=12, seed=seed)]
        )
        return result.texts

    first = sampled(7)
    assert sampled(7) == first
    assert len(set(first)) > 1  # it does sample: the three texts differ
    assert sampled(8) != first


def test_chat_mode_without_a_chat_template_sends_the_raw_prompt(backend, tokenizer):
    assert not getattr(backend.tokenizer, "chat_template", None)
    message = chat_message(PROMPTS[1])
    chat = request(message, n=2, mode="chat", max_new_tokens=8)
    assert backend.render_prompt(chat) == message
    (result,) = generate(backend, [chat])
    assert result.error is None and len(result.texts) == 2
    assert result.prompt_tokens == 2 * len(tokenizer(message)["input_ids"])


def test_chat_mode_with_a_chat_template_uses_it(tmp_path):
    templated = train_tokenizer()
    templated.chat_template = CHAT_TEMPLATE
    backend = transformers_backend.TransformersBackend(
        save(tmp_path, templated, tiny_llama(templated)), batch_size=2
    )
    rendered = backend.render_prompt(request("hello", mode="chat"))
    assert rendered == "<user>hello</user><assistant>"
    assert backend.render_prompt(request("hello")) == "hello"  # completion mode: raw


def test_a_model_that_emits_eos_at_once_gives_empty_texts_that_stopped(tmp_path, tokenizer):
    path = save(tmp_path, tokenizer, tiny_llama(tokenizer, always=tokenizer.eos_token_id))
    backend = transformers_backend.TransformersBackend(path, batch_size=4)
    (result,) = generate(backend, [request(PROMPTS[0], n=2, max_new_tokens=10)])
    assert result.texts == ["", ""]
    assert result.finish_reasons == ["stop", "stop"]
    assert result.completion_tokens == 0


def test_a_stop_sequence_ends_generation_early(tmp_path, tokenizer):
    x = tokenizer.convert_tokens_to_ids("x")
    path = save(tmp_path, tokenizer, tiny_llama(tokenizer, always=x))
    backend = transformers_backend.TransformersBackend(path, batch_size=4)
    (endless,) = generate(backend, [request(PROMPTS[0], max_new_tokens=20)])
    assert endless.texts == ["x" * 20] and endless.finish_reasons == ["length"]
    (stopped,) = generate(backend, [request(PROMPTS[0], max_new_tokens=20, stop=("xxx",))])
    assert stopped.finish_reasons == ["stop"]
    assert stopped.completion_tokens <= 3
    assert "xxx".startswith(stopped.texts[0])


# --- loading -------------------------------------------------------------------------------


def test_make_backend_for_an_hf_spec_gives_a_transformers_backend(model_path):
    backend = make_backend(parse_model_spec("hf:" + model_path), BackendOptions(batch_size=4))
    assert isinstance(backend, transformers_backend.TransformersBackend)
    assert backend.batch_size == 4
    described = backend.describe()
    assert described["backend"] == "hf" and described["model"] == model_path
    assert described["transformers"] == transformers.__version__


@pytest.mark.parametrize("contents", ["nothing", "tokenizer only", "no weights"])
def test_a_folder_without_a_model_raises_generation_error_naming_it(tmp_path, model_path, contents):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    copied = {
        "nothing": [],
        "tokenizer only": ["tokenizer.json", "tokenizer_config.json"],
        "no weights": ["tokenizer.json", "tokenizer_config.json", "config.json"],
    }[contents]
    for name in copied:
        (folder / name).write_bytes((Path(model_path) / name).read_bytes())
    with pytest.raises(GenerationError) as error:
        transformers_backend.TransformersBackend(str(folder))
    assert str(folder) in str(error.value)


def test_batch_size_below_one_is_refused():
    with pytest.raises(GenerationError, match="batch size 0"):
        transformers_backend.TransformersBackend("unused", batch_size=0)


# --- the runner end to end -----------------------------------------------------------------


def two_task_plan(n: int = 2) -> Plan:
    original: PromptSet = load_prompt_set("original", HUMANEVAL)
    settings = SamplingSettings(mode="completion", max_new_tokens=8, seed=3)
    task_ids = frozenset({"HumanEval/0", "HumanEval/2"})
    return Plan([original], HUMANEVAL, [0.8], n, settings, task_ids)


def test_run_plan_with_the_backend_fills_the_store_and_a_rerun_adds_nothing(tmp_path, backend):
    plan = two_task_plan()
    with SampleStore(tmp_path / "store.sqlite") as store:
        first = run_plan("hf:tiny", backend, plan, store, {"test": "1"})
        counts = (first.planned, first.already_stored, first.generated, first.failed)
        assert counts == (4, 0, 4, 0)
        assert first.status == "finished"
        assert first.prompt_tokens > 0 and first.completion_tokens > 0
        samples = list(store.samples())
        assert sorted((s.task_id, s.sample_index) for s in samples) == [
            ("HumanEval/0", 0),
            ("HumanEval/0", 1),
            ("HumanEval/2", 0),
            ("HumanEval/2", 1),
        ]
        for sample in samples:
            prompt = HUMANEVAL.get(sample.task_id).prompt
            assert sample.model == "hf:tiny" and sample.settings_key == plan.settings.key
            assert sample.mode == "completion" and sample.form == "continuation"
            assert isinstance(sample.raw, str)
            assert sample.program == prompt + sample.completion
            assert sample.finish_reason in {"stop", "length"}
            assert sample.run_id == first.run_id

        second = run_plan("hf:tiny", backend, plan, store, {"test": "1"})
        assert (second.already_stored, second.generated, second.failed) == (4, 0, 0)
        assert store.count() == (4, 0)
        runs = store.runs()
        assert [r["status"] for r in runs] == ["finished", "finished"]
        assert runs[0]["settings"]["backend"] == "hf"


# --- the embedded model --------------------------------------------------------------------


@pytest.mark.slow(reason="about 40 s: loads the embedded SmolLM2 model")
def test_embedded_model_answers_humaneval_prompts_in_chat_mode():
    backend = transformers_backend.EmbeddedBackend(batch_size=2)
    assert backend.default_mode == "chat"
    # what a re-run with every sample stored expects without loading the model (its key)
    expected = local_sampling_defaults(parse_model_spec("embedded"), BackendOptions())
    assert expected == (backend.default_mode, backend.dtype)
    described = backend.describe()
    assert described["backend"] == "embedded"
    assert described["gguf_file"].endswith(".gguf")
    assert "SmolLM2" in described["gguf_file"]
    assert (Path(described["model"]) / described["gguf_file"]).is_file()
    tasks = [HUMANEVAL.get("HumanEval/2"), HUMANEVAL.get("HumanEval/23")]
    requests = [
        request(chat_message(t.prompt), key=t.task_id, mode="chat", max_new_tokens=48)
        for t in tasks
    ]
    results = generate(backend, requests)
    backend.close()
    assert sorted(r.request.key for r in results) == ["HumanEval/2", "HumanEval/23"]
    for result in results:
        assert result.error is None
        (text,) = result.texts
        assert isinstance(text, str) and text.strip()
        assert 0 < result.completion_tokens <= 48
