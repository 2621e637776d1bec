"""datatrove's JSONL and Parquet readers, with a shard that cannot be read turned into one
ScanError naming it (datatrove would raise a bare decompression or Arrow error)."""

from __future__ import annotations

import zlib

from datatrove.pipeline.readers import JsonlReader, ParquetReader

from .errors import ScanError

_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError)


class CheckedJsonlReader(JsonlReader):
    def read_file(self, filepath: str):
        try:
            yield from super().read_file(filepath)
        except ScanError:
            raise
        except _READ_ERRORS as error:
            path = self.data_folder.resolve_paths(filepath)
            raise ScanError(f"{path}: cannot read this JSONL shard ({error})") from error


class CheckedParquetReader(ParquetReader):
    def read_file(self, filepath: str):
        try:
            yield from super().read_file(filepath)
        except ScanError:
            raise
        except Exception as error:  # pyarrow raises several unrelated types for a bad file
            path = self.data_folder.resolve_paths(filepath)
            raise ScanError(f"{path}: cannot read this Parquet shard ({error})") from error
