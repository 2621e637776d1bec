"""The shared libraries an ELF file needs (its DT_NEEDED entries), read without running ldd.

Used by the tool's side of the sandbox, once per process, to know which library folders the
sample's root must hold for the standard library's extension modules to load. Only 64-bit
little-endian files are read (None for anything else: the caller falls back to ldd).
"""

from __future__ import annotations

import os
import struct
import sysconfig

PT_LOAD, PT_DYNAMIC, DT_NEEDED, DT_STRTAB = 1, 2, 1, 5


def needed_names(path: str) -> list[str] | None:
    """The sonames `path` needs, or None when it is not a 64-bit little-endian ELF file."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        return None
    try:
        return _needed_in(data)
    except (struct.error, ValueError, IndexError):  # cut short or malformed: ask ldd instead
        return None


def _needed_in(data: bytes) -> list[str] | None:
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for index in range(phnum):
        p_type, _, offset, vaddr, _, filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + index * phentsize
        )
        if p_type == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (offset, filesz)
    if dynamic is None:
        return []
    entries = [struct.unpack_from("<qQ", data, dynamic[0] + i) for i in range(0, dynamic[1], 16)]
    strtab = next((value for tag, value in entries if tag == DT_STRTAB), None)
    if strtab is None:
        return None
    base = next((o + strtab - v for v, o, size in loads if v <= strtab < v + size), None)
    if base is None:
        return None
    names = []
    for tag, value in entries:
        if tag == DT_NEEDED:
            end = data.index(b"\0", base + value)
            names.append(data[base + value : end].decode("ascii", "replace"))
    return names


def search_folders() -> list[str]:
    """Where the dynamic loader looks by default, and where this interpreter's libraries are."""
    folders = []
    triplet = sysconfig.get_config_var("MULTIARCH") or ""
    for root in ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib"):
        folders += [os.path.join(root, triplet)] if triplet else []
        folders.append(root)
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "/libc.so" in path or "/libc-" in path:
                folders.append(os.path.dirname(path))
    folders.append(sysconfig.get_config_var("LIBDIR") or "/usr/lib")
    return list(dict.fromkeys(f for f in folders if os.path.isdir(f)))


def library_folders(paths: list[str]) -> set[str] | None:
    """The folders of every library `paths` need, directly or through each other; None when a
    file cannot be read here or a library is not found (the caller then asks ldd)."""
    folders, seen, todo, search = set(), set(), list(paths), search_folders()
    while todo:
        names = needed_names(todo.pop())
        if names is None:
            return None
        for name in names:
            if name in seen or name.startswith("libpython"):
                continue
            seen.add(name)
            found = next((os.path.join(f, name) for f in search
                          if os.path.exists(os.path.join(f, name))), None)  # fmt: skip
            if found is None:
                return None
            folders.add(os.path.dirname(found))
            todo.append(found)
    return folders
