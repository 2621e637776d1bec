"""The embedded model's start: from its GGUF file against from the converted copy in the cache.

    python3 perf/embedded_start.py [--rounds 2]

Each round loads the embedded SmolLM2 in a fresh process twice, alternating: once with the
content cache off (`CLONEPROBE_NO_CACHE=1`: the GGUF file read and dequantized, as on a first
run) and once from the converted copy (written by a first, untimed load into a temporary cache
folder). Printed: each load's wall time (the process's own imports excluded) and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

LOAD = (
    "import time; from cloneprobe.generation.backends.transformers_backend import "
    "EmbeddedBackend; t = time.perf_counter(); EmbeddedBackend(); "
    "print(time.perf_counter() - t)"
)


def load_seconds(environment: dict[str, str]) -> float:
    done = subprocess.run([sys.executable, "-c", LOAD], env=environment, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        cached = {**os.environ, "CLONEPROBE_CACHE_DIR": cache}
        cached.pop("CLONEPROBE_NO_CACHE", None)
        load_seconds(cached)  # writes the converted copy
        uncached = {**cached, "CLONEPROBE_NO_CACHE": "1"}
        gguf, copy = [], []
        for round_ in range(1, args.rounds + 1):
            load = os.getloadavg()[0]
            gguf.append(load_seconds(uncached))
            copy.append(load_seconds(cached))
            print(f"round {round_} (load {load:.1f}): from the GGUF file {gguf[-1]:.2f} s, "
                  f"from the converted copy {copy[-1]:.2f} s")  # fmt: skip
        middle_gguf, middle_copy = statistics.median(gguf), statistics.median(copy)
        print(f"median: GGUF {middle_gguf:.2f} s, copy {middle_copy:.2f} s: "
              f"{middle_gguf / middle_copy:.1f}x ({time.strftime('%H:%M')}, load "
              f"{os.getloadavg()[0]:.1f} at the end)")  # fmt: skip


if __name__ == "__main__":
    main()
