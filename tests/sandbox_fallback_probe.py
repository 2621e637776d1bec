"""Run by test_sandbox.py in a process that may not create namespaces: two sandboxed runs, each
printing its isolation and reason; the sandbox's warnings go to stderr."""

import logging

from cloneprobe.execution import Sandbox

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    for number in (1, 2):
        result = Sandbox().run(f"print({number})\n")
        print(result.isolation, result.reason, result.stdout.strip())
