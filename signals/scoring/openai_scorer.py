"""Prompt log-probabilities from an OpenAI-compatible server (imported only when chosen).

Two ways a server can score a text it is given as the prompt, tried in this order by the
capability check:

- `echo`: the completions endpoint with `echo=True, logprobs=1, max_tokens=0` (max_tokens=1
  where a server refuses 0) answers with the prompt's own tokens in `choices[0].logprobs`:
  `tokens`, `token_logprobs` (None for the first), `top_logprobs` and `text_offset`. The
  OpenAI API did this for its completion models; vLLM does it too.
- `prompt_logprobs`: vLLM's extra parameter (`prompt_logprobs=0`) answers with
  `choices[0].prompt_logprobs`, one entry per prompt token (None for the first), each a
  `{token_id: {"logprob", "rank", "decoded_token"}}` holding just the prompt's token. Tokens
  are placed by their decoded text, from the end of the prompt back (a BOS token the server
  adds at the start then does not matter).

Only the chosen tokens' log-probs come back, so Min-K%++ (which needs the whole next-token
distribution) is not available through a server. Chat-mode scoring needs the model's chat
template, which a server does not expose on the completions endpoint: not available either.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import openai

from ...generation.backends.openai_backend import _message
from ...generation.secrets import redact_url
from ..base import ScoredText, ScoringText, TokenLogProbs, Unscored

log = logging.getLogger(__name__)

PROBE = "def add(a, b):\n    return a + b\n"
"""A small text the capability check scores."""


class OpenAIScorer:
    full_distribution = False

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout: float = 120.0,
        max_retries: int = 4,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
            max_retries=max_retries,
        )  # fmt: skip
        self.concurrency = max(1, concurrency)
        self.method: str | None = None
        self.echo_max_tokens = 0
        self._reason: str | None = None
        self._checked = False

    @property
    def identity(self) -> str:
        where = redact_url(self.base_url) or "api.openai.com"
        return f"openai:{self.model}@{where}"

    def unavailable_reason(self) -> str | None:
        """Try `echo`, then `prompt_logprobs`, on a small probe text; remember what works."""
        if self._checked:
            return self._reason
        self._checked = True
        failures = []
        for method in ("echo", "prompt_logprobs"):
            try:
                scored = self._score_text(PROBE, PROBE.index("\n") + 1, method)
            except openai.APIStatusError as error:
                failures.append(f"{method}: HTTP {error.status_code} {_message(error)}")
                continue
            except (openai.APIConnectionError, openai.APITimeoutError) as error:
                self._reason = (f"{self.identity}: cannot reach the server ({error}), so the "
                                "likelihood signals cannot be computed from it; check --base-url "
                                "and that the server runs there")  # fmt: skip
                return self._reason
            if isinstance(scored, TokenLogProbs) and scored.logprobs:
                self.method = method
                return None
            failures.append(f"{method}: {scored.reason if isinstance(scored, Unscored) else ''}")
        self._reason = (
            f"{self.identity} does not give prompt log-probs ("
            + "; ".join(failures)
            + "), so the likelihood signals cannot be computed from it; use a server that "
            "returns prompt log-probs (vLLM, or a completion model with echo and logprobs) or a "
            "local model (hf:<path>)"
        )
        return self._reason

    def score(self, texts: Sequence[ScoringText]) -> list[ScoredText]:
        reason = self.unavailable_reason()
        if reason:
            return [Unscored(reason)] * len(texts)
        assert self.method is not None
        method = self.method

        def one(text: ScoringText) -> ScoredText:
            if text.mode == "chat":
                return Unscored(
                    f"{self.identity}: chat-mode texts need the model's chat template, which "
                    "the completions endpoint does not apply; score a completion-mode run"
                )
            try:
                return self._score_text(text.prompt + text.target, len(text.prompt), method)
            except openai.APIError as error:
                return Unscored(f"{self.identity}: {type(error).__name__}: {error}")

        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(one, texts))

    def _score_text(self, text: str, context_chars: int, method: str) -> ScoredText:
        if method == "echo":
            return self._echo(text, context_chars)
        return self._prompt_logprobs(text, context_chars)

    def _echo(self, text: str, context_chars: int) -> ScoredText:
        try:
            response = self.client.completions.create(
                model=self.model, prompt=text, echo=True, logprobs=1,
                max_tokens=self.echo_max_tokens, temperature=0,
            )  # fmt: skip
        except openai.BadRequestError:
            if self.echo_max_tokens:
                raise
            self.echo_max_tokens = 1  # servers that refuse max_tokens=0 (vLLM)
            return self._echo(text, context_chars)
        logprobs = response.choices[0].logprobs if response.choices else None
        if logprobs is None or not logprobs.tokens or logprobs.text_offset is None:
            return Unscored("the answer has no prompt log-probs (logprobs is empty)")
        tokens, values, offsets = logprobs.tokens, logprobs.token_logprobs, logprobs.text_offset
        if not (len(tokens) == len(values or []) == len(offsets)):
            return Unscored("the answer's logprobs lists have unequal lengths")
        picked = [
            (token, value)
            for token, value, start in zip(tokens, values, offsets, strict=True)
            if start + len(token) > context_chars and start < len(text)  # not generated ones
        ]
        return _token_logprobs(picked)

    def _prompt_logprobs(self, text: str, context_chars: int) -> ScoredText:
        response = self.client.completions.create(
            model=self.model, prompt=text, max_tokens=1, temperature=0,
            extra_body={"prompt_logprobs": 0},
        )  # fmt: skip
        choice = response.choices[0] if response.choices else None
        entries = getattr(choice, "prompt_logprobs", None) if choice else None
        if entries is None and response.model_extra:
            entries = response.model_extra.get("prompt_logprobs")
        if not entries:
            return Unscored("the answer has no prompt_logprobs")
        decoded = []
        for entry in entries:
            if not entry:
                decoded.append(("", None))
                continue
            info = next(iter(entry.values()))
            decoded.append((info.get("decoded_token") or "", info.get("logprob")))
        # walk back from the end of the text, placing each token by its decoded text
        picked, end = [], len(text)
        for token, value in reversed(decoded):
            if end <= context_chars:
                break
            start = end - len(token)
            if not token or text[start:end] != token:
                return Unscored(
                    f"cannot place the server's token {token!r} in the text (its decoded "
                    "tokens do not spell the prompt)"
                )
            picked.append((token, value))
            end = start
        return _token_logprobs(list(reversed(picked)))


def _token_logprobs(picked: list[tuple[str, float | None]]) -> ScoredText:
    if any(value is None for _, value in picked):
        return Unscored("the server gave no log-prob for a token of the scored text")
    return TokenLogProbs(tuple(t for t, _ in picked), tuple(float(v) for _, v in picked))  # type: ignore[arg-type]
