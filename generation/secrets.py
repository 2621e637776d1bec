"""Keeping credentials out of everything stored or printed.

A base URL may carry credentials (`https://user:pass@host/v1`, `?api_key=...`, `?token=...`);
the client connects with it as given, but what the store, the reports, the terminal and the
logs see is the URL without them, and any text that quotes a secret has it replaced.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_PARAMETERS = ("key", "token", "secret", "password", "passwd", "pwd", "auth", "sig",
                     "signature", "credential", "session")  # fmt: skip
"""A query parameter whose name contains one of these holds a secret."""
HIDDEN = "***"


def _secret_name(name: str) -> bool:
    name = name.lower().replace("-", "_")
    return any(word in name for word in SECRET_PARAMETERS)


def redact_url(url: str | None) -> str | None:
    """The URL without user:password@ and without secret query parameters."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return HIDDEN  # not a URL we can take apart: show none of it
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _secret_name(k)]
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials a URL carries (user, password, secret query values)."""
    if not url:
        return ()
    try:
        parts = urlsplit(url)
        found = [parts.username, parts.password]
    except ValueError:
        return (url,)
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _secret_name(k)]
    return tuple(s for s in found if s)


@dataclass(frozen=True)
class Redactor:
    """Replaces each known secret in text (and in the strings of nested data) by ***."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str | None]) -> Redactor:
        # longest first, so a secret containing another is hidden whole; 4+ characters only
        kept = {v for v in values if v and len(v) >= 4}
        return cls(tuple(sorted(kept, key=len, reverse=True)))

    def text(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, HIDDEN)
        return text

    def data(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value


class RedactingFilter(logging.Filter):
    """A logging filter that hides the secrets in every record's message."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if self.redactor.secrets:
            record.msg = self.redactor.text(record.getMessage())
            record.args = None
        return True
