"""The same scan on datatrove's Ray executor, on a local Ray cluster the test starts."""

from __future__ import annotations

import pytest
from scan_corpora import planted_corpus, write_jsonl

from cloneprobe.scan.executors import ExecutorSettings
from cloneprobe.scan.readers import CorpusSettings
from cloneprobe.scan.runner import ScanSettings, run_scan


@pytest.mark.slow(reason="about 25 s: starts a local Ray cluster")
@pytest.mark.parametrize("shards", [3, 1], ids=["a file per rank", "one file cut in pieces"])
def test_ray_executor_finds_what_the_local_one_finds(tmp_path, shards):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'cloneprobe[ray]')")
    docs, plants = planted_corpus(count=12, per_kind=2)
    corpus = (CorpusSettings(str(write_jsonl(tmp_path / "corpus", docs, shards=shards))),)

    def scan(kind: str, output: str) -> dict:
        executor = ExecutorSettings(kind=kind, workers=2, tasks=3)
        settings = ScanSettings(corpus, str(tmp_path / output), executor=executor)
        return run_scan(settings)

    local = scan("local", "local")
    try:
        on_ray = scan("ray", "ray")
    finally:
        ray.shutdown()
    assert on_ray["matches"] == local["matches"]
    found = {(m["document"], m["task_id"]) for m in on_ray["matches"]}
    assert {(d, t) for d, t, _ in plants} <= found
    assert on_ray["throughput"]["ranks_run"] == 3
