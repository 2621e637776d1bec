"""Corpora: which datatrove reader reads each one, and a check before any worker starts.

A corpus is a folder or file of JSONL (optionally .gz or .zst), Parquet, a Hugging Face dataset
saved with `save_to_disk`, or a folder of source files (our `SourceFilesReader`, by glob). The
format is detected from what the folder holds unless given. Local corpora are checked first
(every shard opens, its first record has the text field) so that a bad shard is one clear
error naming the file instead of a failure deep inside a worker.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from .errors import ScanError

FORMATS = ("auto", "jsonl", "parquet", "hf", "files")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz", ".ndjson")


@dataclass(frozen=True)
class CorpusSettings:
    path: str
    format: str = "auto"
    text_field: str = "text"
    id_field: str = "id"
    glob: str | None = None
    """Files to read in a folder (default: **/*.py for source files, by suffix otherwise)."""


@dataclass(frozen=True)
class Corpus:
    """A resolved corpus: the folder datatrove reads, the format and the file pattern."""

    folder: str
    format: str
    glob: str | None
    text_field: str
    id_field: str


def _is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def resolve_corpus(settings: CorpusSettings) -> Corpus:
    """Where and what the corpus is; ScanError when it is empty or not there."""
    return resolve_and_list(settings)[0]


def resolve_and_list(settings: CorpusSettings) -> tuple[Corpus, list[str] | None]:
    """The resolved corpus and its files (relative to its folder, as datatrove lists them;
    None for a saved dataset): listed once, for the check, the rank count and the ranks."""
    path = settings.path
    fmt = settings.format
    if fmt not in FORMATS:
        raise ScanError(f"format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if _is_remote(path):
        if fmt == "auto":
            raise ScanError(f"{path}: give --format for a remote corpus ({', '.join(FORMATS[1:])})")
        corpus = Corpus(path, fmt, settings.glob, settings.text_field, settings.id_field)
        return corpus, None if fmt == "hf" else corpus_files(corpus)
    local = Path(path)
    if not local.exists():
        raise ScanError(f"{path}: no such file or folder")
    if not local.is_file() and not local.is_dir():
        raise ScanError(f"{path}: is a FIFO, device or socket, not a corpus; give a folder or "
                        "a file of documents (jsonl, parquet, a saved dataset, source files)")
    folder, glob = (local, settings.glob)
    if local.is_file():
        folder, glob = local.parent, local.name
    walked = None
    if fmt == "auto":
        walked = _walk_for_format(local)
        fmt = _format_of_names(walked) if walked is not None else _detect_format(local)
    if fmt == "files":
        _check_no_fields(settings)
    if glob is None:
        glob = _default_glob(fmt)
    corpus = Corpus(str(folder.resolve()), fmt, glob, settings.text_field, settings.id_field)
    if fmt == "hf":
        files = None
    elif walked is not None and corpus.glob:  # the folder's files, walked once already
        files = _matching(walked, corpus.glob)
    else:
        files = corpus_files(corpus)
    check_corpus(corpus, files)
    return corpus, files


def _check_no_fields(settings: CorpusSettings) -> None:
    """A folder of source files has no fields: a field named for it would be ignored."""
    given = [f"--{name.replace('_', '-')} {getattr(settings, name)!r}"
             for name in ("text_field", "id_field")
             if getattr(settings, name) != CorpusSettings.__dataclass_fields__[name].default]
    if given:
        raise ScanError(f"{settings.path}: {' and '.join(given)} with a folder of source files: "
                        "such a corpus has no fields (each file is one document, named by its "
                        "path); leave them out, or give the format of a corpus of records "
                        "(--format jsonl, parquet or hf)")  # fmt: skip


def _detect_format(path: Path) -> str:
    if path.is_file():
        name = path.name
        if name.endswith(".parquet"):
            return "parquet"
        return "jsonl" if name.endswith(JSONL_SUFFIXES) else "files"
    if _is_saved_dataset(path):
        return "hf"
    candidates = [  # os.walk is scandir-based: a fifth of rglob's time; only these are stat'ed
        (name, os.path.isfile(os.path.join(folder, name)))
        for folder, _, names in os.walk(path)
        for name in names
        if name.endswith((".parquet", *JSONL_SUFFIXES))
    ]
    return _format_of_names(candidates)


def _walk_for_format(path: Path) -> list[tuple[str, bool]] | None:
    """Every file of a local folder (`_walk`), found by one walk that then serves both
    `_detect_format` and the listing; None for a file, a saved dataset, or a folder with a
    symbolic link in it (those go the longer ways)."""
    if not path.is_dir() or _is_saved_dataset(path):
        return None
    return _walk(str(path))


def _walk(root: str) -> list[tuple[str, bool]] | None:
    """Every file below a local folder: its path relative to the folder, and whether it is a
    regular file; None where a symbolic link is met."""
    found: list[tuple[str, bool]] = []
    pending = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_symlink():
                    return None
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((name + "/", entry.path))
                else:
                    found.append((name, entry.is_file(follow_symlinks=False)))
    return found


def _format_of_names(files: list[tuple[str, bool]]) -> str:
    """The format of a folder from its files (name, whether a regular file): parquet where
    one is, else jsonl where one is, else a folder of source files."""
    if any(regular and name.endswith(".parquet") for name, regular in files):
        return "parquet"
    if any(regular and name.endswith(JSONL_SUFFIXES) for name, regular in files):
        return "jsonl"
    return "files"


def _is_saved_dataset(path: Path) -> bool:
    return (path / "dataset_info.json").is_file() or (path / "state.json").is_file()


def _default_glob(fmt: str) -> str | None:
    return {"files": "**/*.py", "parquet": "**/*.parquet", "jsonl": "**/*.jsonl*", "hf": None}[fmt]


def corpus_files(corpus: Corpus) -> list[str]:
    """The files datatrove will read, relative to the corpus folder."""
    from datatrove.io import get_datafolder

    if not _is_remote(corpus.folder) and corpus.glob:
        files = _local_files(corpus.folder, corpus.glob)
        if files is not None:
            return files
    folder = get_datafolder(corpus.folder)
    return sorted(folder.list_files(recursive=True, glob_pattern=corpus.glob))


def _local_files(root: str, glob: str) -> list[str] | None:
    """`DataFolder.list_files` for a local folder without a symbolic link in it, with
    `os.scandir` and fsspec's own glob pattern (fsspec stats every file, a large share of
    the command's start-up on a folder of source files); None where a link is met."""
    walked = _walk(root)
    return None if walked is None else _matching(walked, glob)


def _glob_matcher(glob: str):
    """Whether a relative path matches the glob, as datatrove's listing decides it."""
    from fsspec.utils import glob_translate

    if not any(c in glob for c in "*?["):
        glob = f"*{glob}"  # as datatrove makes a bare suffix a pattern
    return re.compile(glob_translate(glob)).match


def _matching(files: list[tuple[str, bool]], glob: str) -> list[str]:
    """The walked files that the glob matches, sorted (what `_local_files` lists)."""
    matches = _glob_matcher(glob)
    return sorted(name for name, _ in files if matches(name))


def check_corpus(corpus: Corpus, files: list[str] | None = None) -> None:
    """Every local shard opens and its first record has the text field (ScanError if not)."""
    if corpus.format == "hf":
        _check_hf(corpus)
        return
    if files is None:
        files = corpus_files(corpus)
    if not files:
        kind = "source" if corpus.format == "files" else corpus.format
        raise ScanError(
            f"{corpus.folder}: no {kind} files matching {corpus.glob}; check the path, "
            "--format or --glob"
        )
    for name in files:
        if corpus.format == "jsonl":
            _check_jsonl(Path(corpus.folder) / name, corpus.text_field)
        elif corpus.format == "parquet":
            _check_parquet(Path(corpus.folder) / name, corpus.text_field)
        else:
            path = os.path.join(corpus.folder, name)
            try:
                os.close(os.open(path, os.O_RDONLY))  # no file object: a third of open()'s cost
            except OSError as error:
                raise ScanError(f"{path}: cannot read ({error.strerror}); fix its permissions "
                                "or leave it out with --glob") from error  # fmt: skip


def _open_text(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    if path.name.endswith(".zst"):
        import zstandard

        return zstandard.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def _check_jsonl(path: Path, text_field: str) -> None:
    try:
        with _open_text(path) as handle:
            line = next((line for line in handle if line.strip()), None)
    except (OSError, EOFError, UnicodeDecodeError, ValueError, zlib.error) as error:
        raise ScanError(f"{path}: cannot read this JSONL shard ({error}); check the file, or "
                        "leave it out with --glob") from error  # fmt: skip
    if line is None:
        return
    try:
        record = json.loads(line)
    except ValueError as error:
        raise ScanError(f"{path}: the first line is not JSON ({error})") from error
    _check_record(path, record, text_field)


def _check_record(path, record, text_field: str) -> None:
    if not isinstance(record, dict) or text_field not in record:
        fields = ", ".join(sorted(record)) if isinstance(record, dict) else type(record).__name__
        raise ScanError(
            f"{path}: records have no {text_field!r} field (fields: {fields}); name the text "
            "field with --text-field"
        )
    if not isinstance(record[text_field], str):
        raise ScanError(
            f"{path}: the {text_field!r} field is {type(record[text_field]).__name__}, not text; "
            "name the field holding the document's text with --text-field"
        )


def _check_parquet(path: Path, text_field: str) -> None:
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except Exception as error:  # pyarrow raises several unrelated types for a bad file
        raise ScanError(f"{path}: cannot read this Parquet shard ({error})") from error
    if text_field not in schema.names:
        raise ScanError(
            f"{path}: no {text_field!r} column (columns: {', '.join(schema.names)}); name the "
            "text field with --text-field"
        )


def _check_hf(corpus: Corpus) -> None:
    try:
        from datasets import load_from_disk
    except ImportError as error:
        raise ScanError(
            f"{corpus.folder}: reading a Hugging Face dataset needs the `datasets` package "
            "(pip install 'cloneprobe[corpus]')"
        ) from error
    try:
        dataset = load_from_disk(corpus.folder)
    except Exception as error:  # datasets raises FileNotFoundError, ValueError, ...
        raise ScanError(
            f"{corpus.folder}: not a dataset saved with save_to_disk ({error})"
        ) from error
    if hasattr(dataset, "keys"):
        raise ScanError(
            f"{corpus.folder}: a DatasetDict with splits {', '.join(dataset.keys())}; give the "
            "folder of one split"
        )
    if corpus.text_field not in dataset.column_names:
        raise ScanError(
            f"{corpus.folder}: no {corpus.text_field!r} column (columns: "
            f"{', '.join(dataset.column_names)}); name the text field with --text-field"
        )


def strict_adapter(reader, data: dict, path: str, id_in_file):
    """datatrove adapter: like the default one, but a record without the text field is an
    error naming the shard, not a silently skipped document."""
    if reader.text_key not in data:
        folder = getattr(reader, "data_folder", None)
        where = folder.resolve_paths(path) if folder is not None else path
        raise ScanError(
            f"{where}: record {id_in_file} has no {reader.text_key!r} field (fields: "
            f"{', '.join(sorted(data))}); name the text field with --text-field"
        )
    metadata = {k: v for k, v in data.items() if k not in (reader.text_key, reader.id_key)}
    return {
        "text": data[reader.text_key] or "",
        "id": str(data[reader.id_key]) if reader.id_key in data else f"{path}/{id_in_file}",
        "metadata": metadata,
    }


def build_reader(corpus: Corpus, limit: int = -1, paths_file: str | None = None,
                 pieces: list | None = None):  # fmt: skip
    """The datatrove reader for a corpus (imports datatrove). `paths_file` lists the corpus's
    files, one a line (`write_paths_file`), so that no rank lists the folder again; `pieces`
    (JSONL and Parquet) gives each rank its piece of a file instead (pieces.py)."""
    common = {"text_key": corpus.text_field, "id_key": corpus.id_field, "limit": limit,
              "paths_file": paths_file}  # fmt: skip
    if corpus.format == "jsonl":
        from .trove import CheckedJsonlReader

        reader = CheckedJsonlReader(corpus.folder, glob_pattern=corpus.glob,
                                    adapter=strict_adapter, **common)  # fmt: skip
        reader.pieces = pieces
        return reader
    if corpus.format == "parquet":
        from .trove import CheckedParquetReader

        reader = CheckedParquetReader(corpus.folder, glob_pattern=corpus.glob,
                                      adapter=strict_adapter, **common)  # fmt: skip
        reader.pieces = pieces
        return reader
    if corpus.format == "hf":
        from datatrove.pipeline.readers import HuggingFaceDatasetReader

        del common["paths_file"]
        return HuggingFaceDatasetReader(corpus.folder, load_from_disk=True,
                                        adapter=strict_adapter, **common)  # fmt: skip
    from .steps import SourceFilesReader

    return SourceFilesReader(corpus.folder, glob_pattern=corpus.glob, limit=limit,
                             paths_file=paths_file)  # fmt: skip


def file_sizes(corpus: Corpus, files: list[str]) -> list[int]:
    """Each file's size in bytes (a few files: this is for cutting them into pieces)."""
    from datatrove.io import get_datafolder

    folder = get_datafolder(corpus.folder)
    return [int(folder.size(name)) for name in files]


def write_paths_file(output, name: str, files: list[str] | None) -> bool:
    """Write a corpus's file list where every rank can read it (datatrove's `paths_file`:
    rank r reads lines r, r + world_size, ..., as it would shard its own listing). False when
    there is no list (or an empty one: the ranks then say so), or a name that a line cannot
    carry (datatrove strips each line)."""
    if not files or any(f != f.strip() or "\n" in f or "\r" in f for f in files):
        return False
    with output.open(name + ".tmp", "w") as handle:
        handle.write("".join(f + "\n" for f in files))
    output.mv(name + ".tmp", name)
    return True
