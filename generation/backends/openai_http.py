"""The openai SDK clients the OpenAI backend sends its requests with, and the slots that bound
how many are in flight.

The SDK's HTTP stack is most of the client's CPU per request. With aiohttp installed (the
SDK's `aiohttp` extra, `openai.DefaultAioHttpClient`) one client serves every slot at about
half the CPU of the default httpx stack. Without it, one httpx client per SLOTS_PER_CLIENT
slots: httpcore looks at every connection of its pool each time a request starts or ends, so
one pool of 128 connections spent more CPU on that (14 s for 3280 requests) than the requests
took.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import sys
from typing import Any
from urllib.parse import urlsplit

import openai

SLOTS_PER_CLIENT = 16
"""Concurrent requests per httpx client (connection pool)."""


def aiohttp_client_class() -> type | None:
    """The SDK's aiohttp-backed HTTP client where the SDK has it and aiohttp is installed."""
    client = getattr(openai, "DefaultAioHttpClient", None)
    if client is None:
        return None
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return None
    return client


def http_clients(concurrency: int, *, transport: str | None = None,
                 **options: Any) -> list[openai.AsyncOpenAI]:  # fmt: skip
    """SDK clients (`options` as for `openai.AsyncOpenAI`) that keep a connection alive for
    each of `concurrency` slots, all sharing one TLS context. `transport` "httpx" or
    "aiohttp" (None: aiohttp where installed)."""
    limits = openai.DEFAULT_CONNECTION_LIMITS  # an object of the SDK's HTTP library
    # aiohttp refuses a URL holding credentials (user:password@) beside the SDK's
    # Authorization header; httpx sends such a request, so it serves those servers
    in_url = urlsplit(str(options.get("base_url") or "")).username is not None
    wanted = transport != "httpx" and not (transport is None and in_url)
    aiohttp_client = aiohttp_client_class() if wanted else None
    if transport == "aiohttp" and aiohttp_client is None:
        raise RuntimeError(
            "the aiohttp transport needs aiohttp and an openai SDK with DefaultAioHttpClient"
        )
    count = 1 if aiohttp_client else -(-concurrency // SLOTS_PER_CLIENT)
    each = -(-concurrency // count)
    pool = type(limits)(
        max_connections=max(limits.max_connections or 0, each),
        max_keepalive_connections=each,
    )
    tls = tls_context()
    make = aiohttp_client or openai.DefaultAsyncHttpxClient
    return [
        openai.AsyncOpenAI(
            http_client=make(limits=pool, timeout=options.get("timeout"), verify=tls),
            **options,
        )
        for _ in range(count)
    ]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client would build for itself (SSL_CERT_FILE honoured), built
    once per process: loading the certificates takes 20-150 ms, as long as a whole round of
    requests to a fast server."""
    limits = openai.DEFAULT_CONNECTION_LIMITS  # an object of the SDK's HTTP library
    http = sys.modules[type(limits).__module__.partition(".")[0]]  # httpx (or httpx2)
    return http.create_ssl_context()


class Slots:
    """The concurrency limit: `concurrency` slots, taken first come first served, each bound
    to one of the clients (so that a client's pool holds a bounded number of connections)."""

    def __init__(self, clients: list[openai.AsyncOpenAI], concurrency: int) -> None:
        self.clients = clients
        self.concurrency = concurrency
        self.free: asyncio.Queue[int] = asyncio.Queue()
        for slot in range(concurrency):
            self.free.put_nowait(slot)

    @contextlib.asynccontextmanager
    async def taken(self):
        """A free slot's client while the slot is held."""
        slot = await self.free.get()
        try:
            yield self.clients[slot * len(self.clients) // self.concurrency]
        finally:
            self.free.put_nowait(slot)
