"""Which floating-point type a local model computes in: `auto`, `float32` or `bfloat16`.

`auto` picks bfloat16 on a CPU whose instruction set multiplies bfloat16 natively (the
`avx512_bf16` or `amx_bf16` flag of /proc/cpuinfo), float32 anywhere else. Measured on this
project's 2-core AMD EPYC (avx512_bf16): a bfloat16 matrix product runs at about twice the
float32 rate, and a decoding step of the embedded model takes about half the time; without
native bfloat16 the type is emulated and slower than float32. The choice changes the numbers
the model computes, so it is recorded with every run and is part of the sampling settings'
key (samples made in another type are never mixed into a run).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import GenerationError

DTYPES = ("auto", "float32", "bfloat16")
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (empty where there is no /proc/cpuinfo)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def choose_dtype(requested: str, flags: frozenset[str] | None = None) -> str:
    """The type a local model computes in: `requested` unless it is `auto`, which is bfloat16
    when the CPU has native bfloat16 instructions, float32 otherwise."""
    if requested not in DTYPES:
        raise GenerationError(f"dtype {requested!r}: use one of {', '.join(DTYPES)}")
    if requested != "auto":
        return requested
    flags = cpu_flags() if flags is None else flags
    return "bfloat16" if flags & NATIVE_BF16_FLAGS else "float32"
