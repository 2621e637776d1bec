"""datatrove's JSONL and Parquet readers, with a shard that cannot be read turned into one
ScanError naming it (datatrove would raise a bare decompression or Arrow error), and, when
the corpus has fewer files than ranks, each rank reading its piece of a file (pieces.py)."""

from __future__ import annotations

import zlib

from datatrove.pipeline.readers import JsonlReader, ParquetReader
from datatrove.pipeline.readers.base import BaseDiskReader, BaseReader
from datatrove.utils.logging import logger

from .errors import ScanError
from .pieces import Piece, is_compressed

_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError)
_COUNT_CHUNK = 1 << 24


class _LineNumber:
    """A record's line number, worked out only if it is printed (as an id or in an error)."""

    __slots__ = ("find",)

    def __init__(self, find) -> None:
        self.find = find

    def __format__(self, spec: str) -> str:
        return format(self.find(), spec)

    def __str__(self) -> str:
        return str(self.find())


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


class _Pieces(_ShardPathOnce):
    """With `pieces` (one per rank), rank r reads pieces[r] instead of datatrove's share of
    whole files; without, datatrove's own reading."""

    pieces: list[Piece | None] | None = None
    kind = "shard"

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        if self.pieces is None:
            yield from super().run(data, rank, world_size)
            return
        if data:
            yield from data
        if len(self.pieces) != world_size:
            raise ScanError(
                f"{self.data_folder.path}: cut into {len(self.pieces)} pieces for as many "
                f"ranks, run with {world_size}; run the scan as it was started"
            )
        piece = self.pieces[rank]
        if piece is None:
            return
        self.stat_update("input_files")
        read = 0
        try:
            for document in self.read_piece(*piece):
                if self.limit != -1 and read >= self.limit:
                    break
                self.update_doc_stats(document)
                yield document
                read += 1
        except ScanError:
            raise
        except Exception as error:  # pyarrow and the decompressors raise unrelated types
            path = self.data_folder.resolve_paths(piece[0])
            raise ScanError(f"{path}: cannot read this {self.kind} shard ({error})") from error

    def read_piece(self, path: str, part: int, parts: int):
        raise NotImplementedError


class CheckedJsonlReader(_Pieces, JsonlReader):
    kind = "JSONL"

    def read_file(self, filepath: str):
        try:
            yield from super().read_file(filepath)
        except ScanError:
            raise
        except _READ_ERRORS as error:
            path = self.data_folder.resolve_paths(filepath)
            raise ScanError(f"{path}: cannot read this JSONL shard ({error}); check the file, "
                            "or leave it out with --glob") from error  # fmt: skip

    def read_piece(self, path: str, part: int, parts: int):
        """The records of lines that start in the piece's bytes (by line number modulo the
        pieces in a compressed file). A record without an id is named by its line number, as
        datatrove names it, counted only when one is needed."""
        if is_compressed(path) or parts == 1:
            with self.data_folder.open(path, "rb", compression="infer") as handle:
                for number, line in enumerate(handle):
                    if number % parts == part:
                        yield from self._record(line, path, lambda n=number: n)
            return
        size = self.data_folder.size(path)
        start, stop = size * part // parts, size * (part + 1) // parts
        with self.data_folder.open(path, "rb") as handle:
            if start:
                handle.seek(start - 1)
                handle.readline()  # the line under way at `start` is the piece before's
            first = position = handle.tell()
            counted: list[int] = []
            number = 0
            while position < stop:
                line = handle.readline()
                if not line:
                    break

                def line_number(n=number):
                    if not counted:
                        counted.append(self._lines_before(path, first))
                    return counted[0] + n

                yield from self._record(line, path, line_number)
                position += len(line)
                number += 1

    def _record(self, line: bytes, path: str, line_number):
        import orjson

        if not line.strip():
            return
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            logger.warning(f"Error when reading `{path}`: {error}")
            return
        document = self.get_document_from_dict(record, path, _LineNumber(line_number))
        if document:
            yield document

    def _lines_before(self, path: str, offset: int) -> int:
        lines = 0
        with self.data_folder.open(path, "rb") as handle:
            while offset > 0:
                chunk = handle.read(min(_COUNT_CHUNK, offset))
                if not chunk:
                    break
                lines += chunk.count(b"\n")
                offset -= len(chunk)
        return lines


class CheckedParquetReader(_Pieces, ParquetReader):
    kind = "Parquet"

    def read_file(self, filepath: str):
        try:
            yield from super().read_file(filepath)
        except ScanError:
            raise
        except Exception as error:  # pyarrow raises several unrelated types for a bad file
            path = self.data_folder.resolve_paths(filepath)
            raise ScanError(f"{path}: cannot read this Parquet shard ({error})") from error

    def read_piece(self, path: str, part: int, parts: int):
        """The rows of the piece, read a batch at a time from the row groups they lie in; a
        record without an id is named by its row number."""
        import pyarrow.parquet as pq

        with self.data_folder.open(path, "rb") as handle, pq.ParquetFile(handle) as parquet:
            rows = parquet.metadata.num_rows
            low, high = rows * part // parts, rows * (part + 1) // parts
            group_start = 0
            for group in range(parquet.num_row_groups):
                group_rows = parquet.metadata.row_group(group).num_rows
                row = group_start
                group_start += group_rows
                if group_start <= low or row >= high:
                    continue
                for batch in parquet.iter_batches(batch_size=self.batch_size, row_groups=[group]):
                    first, last = max(low - row, 0), min(high - row, batch.num_rows)
                    if first < last:
                        records = batch.slice(first, last - first).to_pylist()
                        for number, record in enumerate(records, start=row + first):
                            document = self.get_document_from_dict(record, path, number)
                            if document:
                                yield document
                    row += batch.num_rows
                    if row >= high:
                        break
