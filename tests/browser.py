"""A real browser for the tests, driven with the standard library: headless Chromium (Debian's
`chromium`) over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the browser reads
commands on fd 3 and writes replies on fd 4, each a JSON message ended by a NUL byte).

`find_chromium()` says where the browser is (None: not installed, and the tests say so when
they skip). Used by tests/test_report_browser.py and to keep the screenshots in docs/img/."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-pipe"]  # fmt: skip
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 60.0
"""Seconds a command may take before the browser is taken to hang (not a timed assert)."""


def find_chromium() -> str | None:
    """The browser's path, from $CHROMIUM or the usual names on PATH."""
    named = os.environ.get("CHROMIUM")
    if named and Path(named).is_file():
        return named
    return next((found for name in NAMES if (found := shutil.which(name))), None)


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; `with Browser(path) as page: page.open(url)`."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900) -> None:
        self.executable, self.width, self.height = executable, width, height
        self.profile = tempfile.TemporaryDirectory(prefix="cloneprobe-chromium-")
        self.next_id, self.session = 0, None
        self.buffer = b""

    def __enter__(self) -> Browser:
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()
        # the child's fd 3 is what it reads, fd 4 what it writes: moved out of the way first,
        # so that dup2 onto 3 and 4 cannot overwrite one of the pipe's own ends
        child_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 100)
        child_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 100)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.process = subprocess.Popen(
            [self.executable, *FLAGS, f"--user-data-dir={self.profile.name}",
             f"--window-size={self.width},{self.height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=lambda: (os.dup2(child_read, 3), os.dup2(child_write, 4)),
        )  # fmt: skip
        os.close(child_read)
        os.close(child_write)
        self.writer, self.reader = to_browser_write, from_browser_read
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target,
                                                           "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": self.width, "height": self.height, "deviceScaleFactor": 1,
            "mobile": False})  # fmt: skip
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.session = None
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.writer)
        os.close(self.reader)
        self.profile.cleanup()

    def _send(self, method: str, params: dict | None) -> int:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.writer, json.dumps(message).encode() + b"\0")
        return self.next_id

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise BrowserError("the browser stopped answering (or exited)")
            chunk = os.read(self.reader, 1 << 16)
            if not chunk:
                raise BrowserError("the browser closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, wait_for: str | None = None) -> dict:
        """Send a command and return its result; with `wait_for`, also wait for that event."""
        number = self._send(method, params)
        deadline = time.monotonic() + TIMEOUT
        result, seen = None, wait_for is None
        while result is None or not seen:
            message = self._receive(deadline)
            if message.get("id") == number:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result = message.get("result", {})
            elif wait_for and message.get("method") == wait_for:
                seen = True
        return result

    def open(self, url: str) -> None:
        self.call("Page.navigate", {"url": url}, wait_for="Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression on the page (JSON-serialisable)."""
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})  # fmt: skip
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression[:60]}...: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path, selector: str | None = None) -> Path:
        """A PNG of the first screen, or of the element `selector` (scrolled into view)."""
        params: dict = {"format": "png"}
        if selector:
            box = self.evaluate(
                f"(() => {{const e = document.querySelector({json.dumps(selector)});"
                "e.scrollIntoView(); const r = e.getBoundingClientRect();"
                "return {x: r.left + scrollX, y: r.top + scrollY, width: r.width,"
                "height: Math.min(r.height, 1400)};})()"
            )
            params["clip"] = {**box, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
