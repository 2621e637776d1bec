"""Print pip constraints pinning every direct dependency of cloneprobe (and the extras named
on the command line) to the lowest version pyproject.toml allows: `name==lower bound`.

Used by `.ci/lowest-versions`, which runs the test suite against them, so every lower bound
in pyproject.toml is one the code was tested with.
"""

import re
import sys
from pathlib import Path

import tomllib

project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]
requirements = list(project["dependencies"])
for extra in sys.argv[1:]:
    requirements += project["optional-dependencies"][extra]
for requirement in requirements:
    spec, _, marker = requirement.partition(";")
    if marker and "python_version < '3.11'" in marker and sys.version_info >= (3, 11):
        continue
    match = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(?:>=|==)\s*([^,\s]+)", spec)
    if match:
        print(f"{match.group(1)}=={match.group(2)}")
