"""datatrove's JSONL and Parquet readers, with a shard that cannot be read turned into one
ScanError naming it (datatrove would raise a bare decompression or Arrow error)."""

from __future__ import annotations

import zlib

from datatrove.pipeline.readers import JsonlReader, ParquetReader
from datatrove.pipeline.readers.base import BaseDiskReader, BaseReader

from .errors import ScanError

_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError)


class _ShardPathOnce(BaseDiskReader):
    """datatrove resolves the shard's full path (through fsspec) for every document's
    `file_path`; here once per shard: the same metadata, without a cost per document."""

    _resolved: tuple[str, str] | None = None

    def get_document_from_dict(self, data: dict, source_file: str, id_in_file):
        document = BaseReader.get_document_from_dict(self, data, source_file, id_in_file)
        if document and self.add_file_path:
            if self._resolved is None or self._resolved[0] != source_file:
                self._resolved = (source_file, self.data_folder.resolve_paths(source_file))
            document.metadata.setdefault("file_path", self._resolved[1])
        return document


class CheckedJsonlReader(_ShardPathOnce, JsonlReader):
    def read_file(self, filepath: str):
        try:
            yield from super().read_file(filepath)
        except ScanError:
            raise
        except _READ_ERRORS as error:
            path = self.data_folder.resolve_paths(filepath)
            raise ScanError(f"{path}: cannot read this JSONL shard ({error})") from error


class CheckedParquetReader(_ShardPathOnce, ParquetReader):
    def read_file(self, filepath: str):
        try:
            yield from super().read_file(filepath)
        except ScanError:
            raise
        except Exception as error:  # pyarrow raises several unrelated types for a bad file
            path = self.data_folder.resolve_paths(filepath)
            raise ScanError(f"{path}: cannot read this Parquet shard ({error})") from error
