"""The child of `cgroups.find_limiter`'s check that a group's memory limit holds.

Run as a script (`python -I -S cgroup_probe.py SIZE PROCS...`, no package imported): it joins
the group (writes itself into each `cgroup.procs` given), then touches SIZE bytes of fresh
memory, a page at a time, and exits 0. Under a limit below SIZE the kernel ends it first; an
exit 0 says the group took the process but not its memory, so the tool does not count on it.
"""

import mmap
import sys


def main(argv: list[str]) -> int:
    size, procs = int(argv[0]), argv[1:]
    for path in procs:
        with open(path, "w") as file:
            file.write("0")
    block = mmap.mmap(-1, size)
    for offset in range(0, size, mmap.PAGESIZE):
        block[offset] = 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
