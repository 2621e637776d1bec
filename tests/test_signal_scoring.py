"""Log-prob scoring: a tiny random-weight Llama through transformers, and an OpenAI-compatible
server on 127.0.0.1 (echo with logprobs, vLLM's prompt_logprobs, and servers that cannot)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from openai_test_server import OpenAITestServer, logprob_tokens

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.signals.base import (
    ScoringText,
    SignalError,
    TaskInputs,
    TokenLogProbs,
    Unscored,
)
from cloneprobe.signals.likelihood import (
    MinKPlusPlusSignal,
    MinKSignal,
    PerplexitySignal,
    ZlibSignal,
)
from cloneprobe.signals.scoring import CachingScorer, ScorerFactory
from cloneprobe.signals.scoring.openai_scorer import OpenAIScorer

TASKS = load_humaneval().tasks


def tiny_model_parts():
    """The tiny model's builders; the tests that need them are skipped without torch (the
    server's tests here need none)."""
    pytest.importorskip("torch")
    import test_transformers_backend

    return test_transformers_backend


def transformers_scorer(*args, **kwargs):
    from cloneprobe.signals.scoring.transformers_scorer import TransformersScorer

    return TransformersScorer(*args, **kwargs)


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_model_parts().train_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return tiny_model_parts().tiny_llama(tokenizer)


def by_hand(model, tokenizer, context: str, target: str):
    """Target token log-probs, and each position's mean and std of log p over the vocabulary,
    from one unpadded forward pass, in float64 with explicit sums."""
    import torch

    encoding = tokenizer(context + target, return_offsets_mapping=True)
    ids = encoding["input_ids"]
    first = next(i for i, (_, end) in enumerate(encoding["offset_mapping"]) if end > len(context))
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].double().numpy()
    logprobs, means, stds = [], [], []
    for position in range(first, len(ids)):
        row = logits[position - 1]
        log_p = row - (row.max() + np.log(np.exp(row - row.max()).sum()))
        p = np.exp(log_p)
        mean = float((p * log_p).sum())
        logprobs.append(float(log_p[ids[position]]))
        means.append(mean)
        stds.append(math.sqrt(float((p * (log_p - mean) ** 2).sum())))
    return logprobs, means, stds, ids[first:]


def test_transformers_scores_only_the_target_tokens_as_one_unpadded_pass_does(model, tokenizer):
    scorer = transformers_scorer(model, tokenizer, "hf:tiny", batch_size=3)
    texts = [ScoringText(t.prompt, t.canonical_solution) for t in TASKS[:4]]
    results = scorer.score(texts)  # batched with left padding: lengths differ
    for text, result in zip(texts, results, strict=True):
        assert isinstance(result, TokenLogProbs)
        logprobs, means, stds, target_ids = by_hand(model, tokenizer, text.prompt, text.target)
        assert list(result.tokens) == tokenizer.convert_ids_to_tokens(target_ids)
        assert tokenizer.convert_tokens_to_string(list(result.tokens)).endswith(text.target)
        assert (
            len(tokenizer.convert_tokens_to_string(list(result.tokens)))
            < len(text.target) + len(text.prompt) // 2
        )  # the prompt's tokens are not in the scored span
        assert result.logprobs == pytest.approx(logprobs, abs=1e-4)
        assert result.means == pytest.approx(means, abs=1e-4)
        assert result.stds == pytest.approx(stds, abs=1e-4)


def test_min_k_and_min_k_plus_plus_on_the_tiny_model_match_the_hand_computation(model, tokenizer):
    task = TASKS[2]  # truncate_number: a short canonical
    scorer = CachingScorer(transformers_scorer(model, tokenizer, "hf:tiny"))
    inputs = TaskInputs(task.task_id, task.prompt, task.canonical_solution, scorer=scorer)
    logprobs, means, stds, _ = by_hand(model, tokenizer, task.prompt, task.canonical_solution)
    n = len(logprobs)
    lowest = max(1, int(0.2 * n))
    expected_min_k = sum(sorted(logprobs)[:lowest]) / lowest
    z = [(lp - mu) / sd for lp, mu, sd in zip(logprobs, means, stds, strict=True)]
    expected_plus_plus = sum(sorted(z)[:lowest]) / lowest
    assert MinKSignal().score_tasks([inputs])[0].value == pytest.approx(expected_min_k, abs=1e-4)
    plus_plus = MinKPlusPlusSignal().score_tasks([inputs])[0]
    assert plus_plus.value == pytest.approx(expected_plus_plus, abs=1e-3)
    assert plus_plus.detail["tokens"] == n
    perplexity = PerplexitySignal().score_tasks([inputs])[0].value
    assert perplexity == pytest.approx(math.exp(-sum(logprobs) / n), rel=1e-4)
    assert scorer.calls == 1  # three signals, one scoring of the text


def test_chat_mode_scores_the_body_after_the_templated_message(model, tokenizer):
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.chat_template = tiny_model_parts().CHAT_TEMPLATE
    scorer = transformers_scorer(model, tokenizer, "hf:tiny")
    task = TASKS[0]
    inputs = TaskInputs(task.task_id, task.prompt, task.canonical_solution, mode="chat",
                        user_message="Complete:\n" + task.prompt)  # fmt: skip
    text = inputs.scoring_text()
    rendered, context_chars, _ = scorer.render(text)
    assert rendered.startswith("<user>Complete:")
    assert rendered[context_chars:] == task.canonical_solution
    assert rendered[:context_chars].endswith("<assistant>```python\n" + task.prompt)
    result = scorer.score([text])[0]
    assert isinstance(result, TokenLogProbs)
    assert tokenizer.convert_tokens_to_string(list(result.tokens)).endswith(task.canonical_solution)


def fixed_logprob(index: int, token: str) -> float:
    """The test server's log-prob of a token: minus its length in characters, over ten."""
    return -len(token) / 10


@pytest.mark.parametrize("mode", ["echo", "prompt_logprobs"])
def test_a_server_scores_the_canonical_through_prompt_log_probs(mode):
    task = TASKS[2]
    with OpenAITestServer(prompt_logprobs=mode, token_logprob=fixed_logprob) as server:
        scorer = OpenAIScorer("test-model", base_url=server.base_url, api_key="k")
        assert scorer.unavailable_reason() is None
        assert scorer.method == mode
        result = scorer.score([ScoringText(task.prompt, task.canonical_solution)])[0]
        sent = [r["json"] for r in server.requests if r["path"] == "/v1/completions"]
    assert isinstance(result, TokenLogProbs)
    # the server's tokens are words with their leading whitespace; the canonical starts a
    # new token because the prompt ends with a newline
    expected = [t for t, at in logprob_tokens(task.prompt + task.canonical_solution)
                if at + len(t) > len(task.prompt)]  # fmt: skip
    assert "".join(result.tokens).strip() == task.canonical_solution.strip()
    assert list(result.tokens) == expected
    assert list(result.logprobs) == pytest.approx([-len(t) / 10 for t in expected])
    if mode == "echo":
        assert sent[-1]["echo"] is True and sent[-1]["logprobs"] == 1
        assert sent[-1]["max_tokens"] == 0
    else:
        assert sent[-1]["prompt_logprobs"] == 0 and sent[-1]["max_tokens"] == 1


def test_min_k_through_the_server_is_the_hand_computed_value():
    task = TASKS[2]
    with OpenAITestServer(prompt_logprobs="echo", token_logprob=fixed_logprob) as server:
        scorer = CachingScorer(OpenAIScorer("test-model", base_url=server.base_url))
        inputs = TaskInputs(task.task_id, task.prompt, task.canonical_solution, scorer=scorer)
        min_k = MinKSignal(k=0.5).score_tasks([inputs])[0]
        zlib_score = ZlibSignal().score_tasks([inputs])[0]
        plus_plus = MinKPlusPlusSignal().score_tasks([inputs])[0]
    tokens = [t for t, at in logprob_tokens(task.prompt + task.canonical_solution)
              if at + len(t) > len(task.prompt)]  # fmt: skip
    values = sorted(-len(t) / 10 for t in tokens)
    lowest = max(1, len(values) // 2)
    assert min_k.value == pytest.approx(sum(values[:lowest]) / lowest)
    assert min_k.detail["scorer"].startswith("openai:test-model@http://127.0.0.1:")
    assert zlib_score.value is not None
    assert plus_plus.value is None
    assert "whole next-token distribution" in (plus_plus.reason or "")


@pytest.mark.parametrize("mode", ["refuse", "none"])
def test_a_server_without_prompt_log_probs_is_reported_not_faked(mode):
    task = TASKS[2]
    with OpenAITestServer(prompt_logprobs=mode) as server:
        scorer = OpenAIScorer("test-model", base_url=server.base_url)
        reason = scorer.unavailable_reason()
        inputs = TaskInputs(task.task_id, task.prompt, task.canonical_solution, scorer=scorer)
        score = MinKSignal().score_tasks([inputs])[0]
    assert reason is not None
    assert "does not give prompt log-probs" in reason
    assert "hf:<path>" in reason
    if mode == "refuse":
        assert "HTTP 400" in reason
    assert score.value is None and score.reason == reason
    assert isinstance(scorer.score([ScoringText("a", "b")])[0], Unscored)


def test_a_local_model_spec_loads_offline_and_scores_as_the_model_does(
    tmp_path, model, tokenizer, monkeypatch
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tokenizer.save_pretrained(tmp_path)
    model.save_pretrained(tmp_path)
    scorer = ScorerFactory()(f"hf:{tmp_path}")
    assert scorer.identity == f"hf:{tmp_path}" and scorer.full_distribution
    task = TASKS[3]
    text = ScoringText(task.prompt, task.canonical_solution)
    loaded = scorer.score([text])[0]

    direct = transformers_scorer(model, tokenizer, "hf:tiny").score([text])[0]
    assert isinstance(loaded, TokenLogProbs) and isinstance(direct, TokenLogProbs)
    assert loaded.logprobs == pytest.approx(direct.logprobs, abs=1e-5)


def test_a_model_that_cannot_be_loaded_is_a_signal_error(tmp_path):
    pytest.importorskip("torch")
    with pytest.raises(SignalError, match="cannot load a model"):
        ScorerFactory()(f"hf:{tmp_path / 'missing'}")
