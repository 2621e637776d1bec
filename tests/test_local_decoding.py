"""The local decoding loop keeps its results: the dtype choice, the grouped decoding
attention, the cache written in place, the partial-sort nucleus, and the dtype in the run's
settings (tiny random-weight Llama of test_transformers_backend, real transformers code)."""

from __future__ import annotations

import pytest
from local_extra import Deferred, skip_without_the_local_extra, torch, transformers

skip_without_the_local_extra()

from click.testing import CliRunner
from test_transformers_backend import (
    HUMANEVAL,
    PROMPTS,
    generate,
    request,
    texts_by_key,
)

from cloneprobe.audit.audit_report import empty_report
from cloneprobe.cli.main import main
from cloneprobe.generation import (
    BackendOptions,
    GenerationError,
    SampleStore,
    SamplingSettings,
    parse_model_spec,
)
from cloneprobe.generation.backends import local_sampling_defaults
from cloneprobe.generation.backends.dtype import choose_dtype, cpu_flags
from cloneprobe.reports.tables import runs_line

# imported by the first test that uses them: they import torch
decoding = Deferred("cloneprobe.generation.backends.decoding")
grouped_attention = Deferred("cloneprobe.generation.backends.grouped_attention")
growing = Deferred("cloneprobe.generation.backends.growing_cache")
transformers_backend = Deferred("cloneprobe.generation.backends.transformers_backend")

# --- the dtype ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "expected"),
    [({"avx512f", "avx512_bf16"}, "bfloat16"), ({"amx_bf16"}, "bfloat16"),
     ({"avx512f", "avx2"}, "float32"), (set(), "float32")],
)  # fmt: skip
def test_auto_dtype_is_bfloat16_only_on_a_cpu_with_native_bfloat16(flags, expected):
    assert choose_dtype("auto", frozenset(flags)) == expected
    assert choose_dtype("float32", frozenset({"avx512_bf16"})) == "float32"
    assert choose_dtype("bfloat16", frozenset()) == "bfloat16"


def test_an_unknown_dtype_is_refused_naming_the_choices():
    with pytest.raises(GenerationError, match=r"float16.*auto, float32, bfloat16"):
        choose_dtype("float16", frozenset())


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16\n\nprocessor\t: 1\n")
    assert cpu_flags(cpuinfo) == {"fpu", "avx512f", "avx512_bf16"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_backend_computes_in_the_chosen_dtype_and_records_it(model_path, dtype):
    backend = transformers_backend.TransformersBackend(model_path, batch_size=2, dtype=dtype)
    assert backend.model.dtype == getattr(torch, dtype)
    assert backend.describe()["dtype"] == dtype
    # what a re-run expects without loading the weights: the same mode and dtype (same key)
    expected = local_sampling_defaults(parse_model_spec(f"hf:{model_path}"),
                                       BackendOptions(dtype=dtype))  # fmt: skip
    assert expected == (backend.default_mode, backend.dtype)
    (result,) = generate(backend, [request(PROMPTS[0], n=2, max_new_tokens=5)])
    assert len(result.texts) == 2


def test_the_settings_key_separates_bfloat16_and_keeps_float32_as_before():
    assert SamplingSettings(dtype="bfloat16").key != SamplingSettings(dtype="float32").key
    assert SamplingSettings(dtype="float32").key == SamplingSettings().key  # stores made before


def test_runs_of_another_dtype_are_not_mixed_in_the_store(tmp_path, model_path):
    store = tmp_path / "store.sqlite"
    for dtype in ("bfloat16", "float32", "bfloat16"):
        result = CliRunner().invoke(
            main,
            ["generate", "--model", f"hf:{model_path}", "--limit", "1", "-n", "1",
             "--max-new-tokens", "4", "--prompts", "original", "--temperature", "0",
             "--dtype", dtype, "--store", str(store)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    with SampleStore(store) as opened:
        runs = opened.runs()
        samples = list(opened.samples())
    # the third found every sample in the store (the first run's) and loaded nothing: no run
    assert [run["settings"]["dtype"] for run in runs] == ["bfloat16", "float32"]
    # one sample per dtype: the third run resumed the first, the second made its own
    assert len(samples) == 2
    assert len({s.settings_key for s in samples}) == 2
    assert {s.task_id for s in samples} == {HUMANEVAL.tasks[0].task_id}


def test_the_report_says_which_dtype_a_local_run_computed_in():
    report = empty_report(settings={"sampling": [
        {"model": "embedded", "settings": {"backend": "embedded", "mode": "chat",
                                           "dtype": "bfloat16"}},
        {"model": "hf:old", "settings": {"backend": "hf", "mode": "completion"}},
        {"model": "openai:m", "settings": {"backend": "openai", "mode": "completion"}},
    ]})  # fmt: skip
    assert runs_line(report) == (
        "Samples from embedded (chat mode, bfloat16); hf:old (completion mode, float32); "
        "openai:m (completion mode)."
    )


# --- the decoding loop's parts ---------------------------------------------------------------


def grouped_query_llama(tokenizer):
    """A tiny Llama whose 4 query heads share 2 key/value heads (as SmolLM2's 9 share 3)."""
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    torch.manual_seed(1)
    return transformers.LlamaForCausalLM(config).eval()


def decoding_step_logits(model, cache_factory) -> torch.Tensor:
    """Logits of two decoding steps after a left-padded prefill of two prompts."""
    torch.manual_seed(2)
    ids = torch.randint(1, 300, (2, 9))
    mask = torch.ones_like(ids)
    mask[0, :4] = 0  # the first prompt is shorter: left padding
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    cache = cache_factory()
    with torch.inference_mode():
        model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache)
        steps = []
        for step in range(2):
            mask = torch.cat([mask, torch.ones((2, 1), dtype=mask.dtype)], dim=-1)
            out = model(
                input_ids=torch.tensor([[5], [7]]),
                attention_mask=mask,
                position_ids=positions[:, -1:] + 1 + step,
                past_key_values=cache,
            )
            steps.append(out.logits[:, -1])
    return torch.stack(steps)


def test_grouped_decode_attention_and_the_growing_cache_give_sdpa_and_dynamic_cache_logits(
    tokenizer,
):
    model = grouped_query_llama(tokenizer)
    reference = decoding_step_logits(model, transformers.DynamicCache)
    grouped_attention.use_grouped_decode_attention(model)
    assert model.config._attn_implementation == grouped_attention.NAME
    ours = decoding_step_logits(model, growing.growing_cache)
    torch.testing.assert_close(ours, reference, rtol=1e-4, atol=1e-5)


def test_the_growing_cache_drops_rows_and_keeps_the_rest(tokenizer):
    cache = growing.growing_cache()
    keys = torch.arange(3 * 2 * 4 * 2, dtype=torch.float32).reshape(3, 2, 4, 2)
    cache.update(keys, -keys, 0)
    cache.batch_select_indices(torch.tensor([0, 2]))
    step = torch.full((2, 2, 1, 2), 99.0)
    got_keys, got_values = cache.update(step, -step, 0)
    assert torch.equal(got_keys, torch.cat([keys[[0, 2]], step], dim=2))
    assert torch.equal(got_values, -torch.cat([keys[[0, 2]], step], dim=2))
    assert cache.get_seq_length() == 5


def test_the_partial_sort_nucleus_draws_what_the_full_sort_draws():
    generator = torch.Generator().manual_seed(3)
    peaked = torch.randn(6, 500, generator=generator) * 8  # nucleus within a few tokens
    flat = torch.randn(6, 500, generator=generator) * 0.1  # nucleus of most of the vocabulary
    logits = torch.cat([peaked, flat])
    uniforms = torch.rand(12, generator=generator)
    for temperature, top_p in [(0.8, 0.95), (1.0, 0.5), (0.2, 0.9)]:
        partial = decoding.sample_tokens(logits, temperature, top_p, uniforms, candidates=16)
        full = decoding.sample_tokens(logits, temperature, top_p, uniforms, candidates=500)
        assert torch.equal(partial, full)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_seeded_samples_do_not_depend_on_the_batch_in_either_dtype(model_path, dtype):
    requests = [request(PROMPTS[i], key=i, n=2, temperature=1.0, max_new_tokens=10, seed=5)
                for i in (0, 1, 2)]  # fmt: skip
    alone = texts_by_key(
        generate(
            transformers_backend.TransformersBackend(model_path, batch_size=1, dtype=dtype),
            requests,
        )
    )
    batched = texts_by_key(
        generate(
            transformers_backend.TransformersBackend(model_path, batch_size=6, dtype=dtype),
            requests[::-1],
        )
    )
    assert alone == batched


# --- sequences streaming through one batch ---------------------------------------------------


def test_sequences_joining_a_running_batch_decode_as_they_do_alone(model_path):
    """A stop check on the text's length ends sequences at different steps, so waiting ones
    join rows that have run for a while (their cache rows and masks aligned at the right, the
    positions that are padding in every row dropped as rows leave). float32: in bfloat16 a
    prompt prefilled with padding already gets other logits than alone, joining or not."""
    backend = transformers_backend.TransformersBackend(model_path, batch_size=1, dtype="float32")
    model, tokenizer = backend.model, backend.tokenizer
    prompts = [tuple(tokenizer(p)["input_ids"]) for p in PROMPTS]
    sequences = [decoding.SequenceToDecode(prompts[i % 3][: 20 + 7 * i], seed=i) for i in range(7)]

    def decode(batch_size: int) -> tuple[dict[int, decoding.Decoded], list[int]]:
        decoded: dict[int, decoding.Decoded] = {}
        decoding.decode_stream(
            model, tokenizer, sequences, batch_size=batch_size, temperature=1.0, top_p=0.95,
            max_new_tokens=16, end_token_ids=backend.end_token_ids,
            pad_token_id=tokenizer.pad_token_id, on_decoded=decoded.__setitem__,
            stop=lambda text: len(text) > 25,
        )  # fmt: skip
        return decoded, list(decoded)

    alone, _ = decode(1)
    streamed, order = decode(3)
    assert streamed == alone
    assert order != sorted(order)  # sequences ended out of order: rows left and others joined
    assert len({len(d.token_ids) for d in alone.values()}) > 1
