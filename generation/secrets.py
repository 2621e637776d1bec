"""Keeping credentials out of what is stored and printed."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_PARAMETERS = ("key", "api_key", "apikey", "api-key", "token", "access_token", "auth",
                     "password", "secret", "sig", "signature")  # fmt: skip


def redact_url(url: str | None) -> str | None:
    """A URL without its `user:password@` part and without query parameters that carry
    credentials (`?api_key=...`): what may be stored, logged or reported."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode(
        [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
         if k.lower() not in SECRET_PARAMETERS]
    )  # fmt: skip
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
