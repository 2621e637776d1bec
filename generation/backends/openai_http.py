"""How the OpenAI backend sends its requests: one POST of a JSON body, the answer's bytes back,
errors raised as the openai SDK's own (`APIStatusError` and its kinds, `APIConnectionError`,
`APITimeoutError`), and the slots that bound how many requests are in flight.

Client CPU per request is what limits a fast server at high concurrency, so with aiohttp
installed (the SDK's `aiohttp` extra) the requests go straight through one aiohttp session
whose pool keeps a connection alive per slot: the SDK's own request path (its request options
model, URL and header merging, an httpx request wrapped around the aiohttp one) cost about
three times the HTTP exchange itself (1.5 ms of CPU a request against about 0.4 ms;
docs/performance-generation.md). The SDK still gives the headers it would send, the errors
and what they say. Without aiohttp, or with credentials in the base URL (aiohttp refuses them
beside an Authorization header), the SDK's httpx client posts, one per SLOTS_PER_CLIENT slots:
httpcore looks at every connection of its pool each time a request starts or ends, so one
pool of 128 connections spent more CPU on that (14 s for 3280 requests) than the requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import sys
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import openai
import orjson

SLOTS_PER_CLIENT = 16
"""Concurrent requests per httpx client (connection pool)."""
MAX_REDIRECTS = 20
"""Redirects followed per request (as the SDK's httpx client)."""
REDIRECTS = {301, 302, 303, 307, 308}


def aiohttp_installed() -> bool:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


def http_module():
    """The SDK's HTTP library (httpx, or httpx2 in newer SDKs): its requests and responses
    are what the SDK's errors hold."""
    limits = openai.DEFAULT_CONNECTION_LIMITS  # an object of the SDK's HTTP library
    return sys.modules[type(limits).__module__.partition(".")[0]]


def posters(concurrency: int, *, transport: str | None = None, base_url: str | None,
            api_key: str, timeout: float, default_query: dict | None = None) -> list:  # fmt: skip
    """What posts the requests: one `AiohttpPoster` for every slot, or one `SdkPoster` per
    SLOTS_PER_CLIENT slots. `transport` "httpx" or "aiohttp" (None: aiohttp where installed
    and the base URL holds no credentials)."""
    in_url = urlsplit(str(base_url or "")).username is not None
    direct = transport == "aiohttp" or (transport is None and not in_url)
    if direct and not aiohttp_installed():
        if transport == "aiohttp":
            raise RuntimeError("the aiohttp transport needs aiohttp (openai[aiohttp])")
        direct = False
    options = {"base_url": base_url, "api_key": api_key, "default_query": default_query,
               "max_retries": 0, "timeout": timeout}  # fmt: skip
    if direct:
        return [AiohttpPoster(_lending_client(**options), concurrency, timeout)]
    count = -(-concurrency // SLOTS_PER_CLIENT)
    return [SdkPoster(_sdk_client(-(-concurrency // count), **options)) for _ in range(count)]


def _sdk_client(connections: int, **options: Any) -> openai.AsyncOpenAI:
    """An SDK client whose httpx pool keeps `connections` alive, sharing one TLS context."""
    limits = openai.DEFAULT_CONNECTION_LIMITS
    pool = type(limits)(
        max_connections=max(limits.max_connections or 0, connections),
        max_keepalive_connections=connections,
    )
    http_client = openai.DefaultAsyncHttpxClient(
        limits=pool, timeout=options.get("timeout"), verify=tls_context()
    )
    return openai.AsyncOpenAI(http_client=http_client, **options)


def _lending_client(**options: Any) -> openai.AsyncOpenAI:
    """An SDK client that only lends the aiohttp poster its headers, URL, query and status
    errors: its httpx client never sends (its transport refuses), so making it loads no
    certificates and closing it closes no connection pool. Closing httpcore's pool imported
    anyio's asyncio backend, 20-50 ms at the end of every run."""
    client = http_module().AsyncClient(
        transport=_unsent_transport()(), trust_env=False, timeout=options.get("timeout")
    )
    return openai.AsyncOpenAI(http_client=client, **options)


@functools.cache
def _unsent_transport() -> type:
    """A transport of the SDK's HTTP library that refuses to send."""

    class UnsentTransport(http_module().AsyncBaseTransport):
        async def handle_async_request(self, request):
            raise RuntimeError("the aiohttp poster sends the requests, not this SDK client")

    return UnsentTransport


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client would build for itself (SSL_CERT_FILE honoured), built
    once per process: loading the certificates takes 20-150 ms, as long as a whole round of
    requests to a fast server."""
    return http_module().create_ssl_context()


class SdkPoster:
    """Posts through the SDK's own client (its plain `post`: auth, query, timeout, errors)."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.client = client

    async def post(self, path: str, body: dict) -> bytes:
        return await self.client.post(path, body=body, cast_to=bytes)

    async def close(self) -> None:
        await self.client.close()


class AiohttpPoster:
    """Posts through one aiohttp session (made on first use, in the running loop) with the
    headers, URL and query the SDK client `sdk` would use; a 3xx is followed as the SDK
    follows it (303, and a POST's 301 and 302, become a GET; Authorization is dropped on
    leaving the origin); errors are raised as the SDK raises them, `sdk` making the status
    errors, so callers cannot tell the two posters apart. Only connecting has a timeout
    here: the caller bounds each post with its own deadline (the OpenAI backend's `_within`)."""

    def __init__(self, sdk: openai.AsyncOpenAI, concurrency: int, timeout: float) -> None:
        self.sdk = sdk
        self.concurrency = concurrency
        self.timeout = timeout
        self.base = str(sdk.base_url).split("?")[0].rstrip("/")
        query = {k: v for k, v in (sdk.default_query or {}).items() if isinstance(v, str)}
        self.query = "?" + urlencode(query) if query else ""
        headers = {k: v for k, v in sdk.default_headers.items() if isinstance(v, str)}
        if not any(k.lower() == "authorization" for k in headers) and sdk.api_key:
            headers["Authorization"] = f"Bearer {sdk.api_key}"
        self.headers = headers
        self.session = None
        self.proxy: tuple = (None, None)

    def _session(self):
        import aiohttp

        if self.session is None:
            # HTTP(S)_PROXY and NO_PROXY as the SDK's client honours them, looked up once:
            # the session's own `trust_env` looks them (and ~/.netrc) up in a thread for
            # every request
            with contextlib.suppress(LookupError, ValueError, ImportError):
                from aiohttp.helpers import get_env_proxy_for_url
                from yarl import URL

                self.proxy = get_env_proxy_for_url(URL(self.base))
            self.session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.concurrency, ssl=tls_context()),
                # no read timeout: the backend's deadline (`timeout` for the whole request)
                # always ends a stalled answer first, and aiohttp rescheduled the read timer
                # on every chunk received (5% of the requests' CPU)
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout),
            )
        return self.session

    async def post(self, path: str, body: dict) -> bytes:
        import aiohttp

        session = self._session()
        method, url, headers = "POST", self.base + path + self.query, self.headers
        data: bytes | None = orjson.dumps(body)
        for _ in range(MAX_REDIRECTS + 1):
            try:
                async with session.request(method, url, data=data, headers=headers,
                                           allow_redirects=False, proxy=self.proxy[0],
                                           proxy_auth=self.proxy[1]) as response:  # fmt: skip
                    content = await response.read()
                    status, location = response.status, response.headers.get("location")
                    raw_headers = response.raw_headers
            except aiohttp.ClientError as error:
                request = http_module().Request(method, url)
                if isinstance(error, asyncio.TimeoutError):
                    raise openai.APITimeoutError(request=request) from error
                raise openai.APIConnectionError(request=request) from error
            if 200 <= status < 300:
                return content
            if status in REDIRECTS and location:
                method, url, data, headers = self._redirect(
                    status, method, url, location, data, headers
                )
                continue
            http = http_module()
            answer = http.Response(
                status, headers=raw_headers, content=content, request=http.Request(method, url)
            )
            raise self.sdk._make_status_error_from_response(answer)
        raise openai.APIConnectionError(
            message=f"more than {MAX_REDIRECTS} redirects",
            request=http_module().Request(method, url),
        )

    def _redirect(self, status, method, url, location, data, headers):
        """The request a redirect asks for, as httpx makes it."""
        target = urljoin(url, location)
        if status == 303 or (status in (301, 302) and method == "POST"):
            method, data = "GET", None
        if _origin(target) != _origin(url):
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        return method, target, data, headers

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
        with contextlib.suppress(Exception):
            await self.sdk.close()


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, parts.hostname, parts.port or default


class Slots:
    """The concurrency limit: `concurrency` slots, taken first come first served, each bound
    to one of the posters (so that a poster's pool holds a bounded number of connections)."""

    def __init__(self, posters: list, concurrency: int) -> None:
        self.posters = posters
        self.concurrency = concurrency
        self.free: asyncio.Queue[int] = asyncio.Queue()
        for slot in range(concurrency):
            self.free.put_nowait(slot)

    @contextlib.asynccontextmanager
    async def taken(self):
        """A free slot's poster while the slot is held."""
        slot = await self.free.get()
        try:
            yield self.posters[slot * len(self.posters) // self.concurrency]
        finally:
            self.free.put_nowait(slot)
