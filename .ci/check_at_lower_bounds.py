"""Exit non-zero unless every `name==version` line of the constraints file given is the
version installed (so the lowest-versions run really tests the lower bounds)."""

import sys
from importlib import metadata


def release(version: str) -> tuple[int, ...]:
    """`2.13.0+cpu` -> (2, 13); trailing zeros dropped so `0.10` equals `0.10.0`."""
    parts = [int(p) for p in version.split("+")[0].split(".") if p.isdigit()]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


with open(sys.argv[1]) as constraints:
    pins = [line.strip() for line in constraints if line.strip()]
wrong = []
for pin in pins:
    name, _, version = pin.partition("==")
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        wrong.append(f"{name}: not installed")
        continue
    if release(installed) != release(version):
        wrong.append(f"{name}: {installed} installed, lower bound {version}")
if wrong:
    sys.exit("not at the lower bounds:\n" + "\n".join(wrong))
print(f"lowest versions: all {len(pins)} direct dependencies at their lower bounds")
