"""Rows kept on disk instead of in memory: a report's per-sample rows and its full evidence
grow with the number of samples, so they are spooled to a temporary JSON-lines file and
streamed out when the report is written."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator


class RowSpool:
    """An append-only list of JSON objects in a temporary file; iterate to read them back."""

    def __init__(self) -> None:
        self._file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - kept open while the report lives
            "w+", encoding="utf-8", suffix=".jsonl", prefix="cloneprobe-"
        )
        self._count = 0

    def append(self, row: dict) -> None:
        self._file.write(json.dumps(row) + "\n")
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def lines(self) -> Iterator[str]:
        """Each row as its JSON line (without the newline)."""
        self._file.flush()
        with open(self._file.name, encoding="utf-8") as rows:
            for line in rows:
                yield line.rstrip("\n")

    def __iter__(self) -> Iterator[dict]:
        return (json.loads(line) for line in self.lines())


def json_chunks(report: dict) -> Iterator[str]:
    """The report as JSON text, piece by piece (spooled rows streamed, one per line)."""
    yield "{"
    for number, (key, value) in enumerate(report.items()):
        yield ("," if number else "") + "\n  " + json.dumps(key) + ": "
        if isinstance(value, RowSpool):
            yield "["
            for index, line in enumerate(value.lines()):
                yield ("," if index else "") + "\n    " + line
            yield "\n  ]" if len(value) else "]"
        else:
            yield json.dumps(value, indent=2).replace("\n", "\n  ")
    yield "\n}\n"
