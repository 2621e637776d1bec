"""Small corpora for the scan tests: real standard-library files as hosts, HumanEval canonicals
planted in them (cloneprobe.scan.planting), written in each format the scan reads."""

from __future__ import annotations

import gzip
import json
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.scan.planting import KINDS, plant_into, planted_code

STDLIB = Path(sysconfig.get_paths()["stdlib"])
HOST_FOLDERS = ("json", "email", "http", "urllib", "logging")
PLANTED_TASKS = ("HumanEval/0", "HumanEval/10", "HumanEval/20", "HumanEval/31", "HumanEval/58",
                 "HumanEval/100", "HumanEval/120", "HumanEval/129", "HumanEval/150")  # fmt: skip
"""Tasks whose canonical body is long enough to be evidence (not `short`)."""


@dataclass(frozen=True)
class Doc:
    id: str
    text: str
    repo: str


def host_documents(count: int = 24) -> list[Doc]:
    files = sorted(p for folder in HOST_FOLDERS for p in (STDLIB / folder).glob("*.py"))[:count]
    return [
        Doc(str(p.relative_to(STDLIB)), p.read_text(encoding="utf-8"), p.parent.name)
        for p in files
    ]


def planted_corpus(count: int = 24, per_kind: int = 3) -> tuple[list[Doc], set[tuple]]:
    """Host documents, the first 3 x per_kind of them with a canonical planted; and the
    (document, task_id, kind) of each plant."""
    docs, codes = planted_corpus_with_code(count, per_kind)
    return docs, set(codes)


def planted_corpus_with_code(count: int = 24, per_kind: int = 3) -> tuple[list[Doc], dict]:
    """`planted_corpus`, with the code planted for each (document, task_id, kind)."""
    benchmark = load_humaneval()
    docs = host_documents(count)
    codes = {}
    for n in range(per_kind * len(KINDS)):
        kind = KINDS[n % len(KINDS)]
        task = benchmark.get(PLANTED_TASKS[n % len(PLANTED_TASKS)])
        doc = docs[n]
        code = planted_code(task, kind, n)
        docs[n] = Doc(doc.id, plant_into(doc.text, code, n), doc.repo)
        codes[(doc.id, task.task_id, kind)] = code
    return docs, codes


def write_files(folder: Path, docs: list[Doc]) -> Path:
    for doc in docs:
        path = folder / doc.repo / Path(doc.id).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc.text, encoding="utf-8")
    return folder


def write_jsonl(folder: Path, docs: list[Doc], shards: int = 2, compress: bool = False,
                text_field: str = "text") -> Path:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for shard in range(shards):
        name = f"shard-{shard}.jsonl" + (".gz" if compress else "")
        opener = gzip.open if compress else open
        with opener(folder / name, "wt", encoding="utf-8") as handle:
            for doc in docs[shard::shards]:
                record = {"id": doc.id, text_field: doc.text, "repo": doc.repo}
                handle.write(json.dumps(record) + "\n")
    return folder


def write_parquet(folder: Path, docs: list[Doc]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table({"id": [d.id for d in docs], "text": [d.text for d in docs],
                      "repo": [d.repo for d in docs]})  # fmt: skip
    pq.write_table(table.slice(0, len(docs) // 2), folder / "part-0.parquet")
    pq.write_table(table.slice(len(docs) // 2), folder / "part-1.parquet")
    return folder


def write_hf_dataset(folder: Path, docs: list[Doc]) -> Path:
    from datasets import Dataset

    Dataset.from_dict({"id": [d.id for d in docs], "text": [d.text for d in docs],
                       "repo": [d.repo for d in docs]}).save_to_disk(str(folder))  # fmt: skip
    return folder
