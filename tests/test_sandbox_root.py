"""What the sample's root holds: the libraries the standard library's extension modules need,
read from their ELF headers (execution/elf_needs.py) the way the dynamic loader would find
them, checked against ldd on this machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from cloneprobe.execution.elf_needs import library_folders, needed_names

_FOLDER = Path(getattr(zlib, "__file__", None) or "/nonexistent").parent
MODULES = sorted(str(p) for p in _FOLDER.glob("*.so"))


@pytest.mark.skipif(not MODULES or shutil.which("ldd") is None, reason="no shared modules/ldd")
def test_elf_needs_finds_the_libraries_ldd_finds():
    listing = subprocess.run(["ldd", *MODULES], capture_output=True, text=True).stdout
    by_ldd = set()
    for line in listing.splitlines():
        parts = line.split()
        if "=>" in parts and parts[parts.index("=>") + 1].startswith("/"):
            path = parts[parts.index("=>") + 1]
            if "libpython" not in path:
                by_ldd.add(os.path.realpath(os.path.dirname(path)))
    found = library_folders(MODULES)
    assert found is not None
    assert {os.path.realpath(f) for f in found} == by_ldd


def test_a_module_s_needed_names_are_read_from_its_header():
    module = next((m for m in MODULES if Path(m).name.startswith("zlib.")), None)
    if module is None:
        pytest.skip("zlib is built in here")
    assert "libz.so.1" in needed_names(module)


def test_a_file_that_is_not_elf_is_left_to_ldd(tmp_path):
    script = tmp_path / "x.so"
    script.write_text("#!/bin/sh\n")
    assert needed_names(str(script)) is None
    assert library_folders([str(script)]) is None
    assert needed_names(sys.executable) is not None


def test_a_tool_installed_in_a_venv_under_tmp_still_runs_samples_in_namespaces(tmp_path):
    """A venv under /tmp (as .ci/lowest-versions makes) has links there that the sample's root
    reproduces; the workspace tmpfs at /tmp must still be mounted, not fail the whole sandbox
    into the guard fallback."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(env)], check=True, timeout=120)  # fmt: skip
    probe = (
        "from cloneprobe.execution import Sandbox\n"
        "box = Sandbox()\n"
        "result = box.run('def add(a, b):\\n    return a + b\\n', "
        "'def check(candidate):\\n    assert candidate(1, 2) == 3\\n', 'add')\n"
        "print(box.recorded, result.reason)\n"
    )
    done = subprocess.run([str(env / "bin" / "python"), "-c", probe], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "guard" not in done.stdout.split()[0], done.stdout + done.stderr
    assert done.stdout.split()[-1] == "passed", done.stdout + done.stderr


def test_a_cut_short_elf_file_is_left_to_ldd_not_a_crash(tmp_path):
    short = tmp_path / "short.so"
    short.write_bytes(b"\x7fELF\x02\x01\x01")  # a 64-bit little-endian header, cut off
    assert needed_names(str(short)) is None
