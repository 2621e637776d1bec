"""Child-process program: run a task's reference code, then evaluate example calls.

Started by path (`python -I example_calls.py`) by `reference_run.evaluate_calls`; reads
`{"source": ..., "calls": [...]}` as JSON on stdin and prints the repr of each call's result
(null where it raised) as one JSON list, on the last line of stdout.
"""

import json
import sys


def main():
    request = json.loads(sys.stdin.read())
    namespace = {"__name__": "__main__"}
    exec(compile(request["source"], "<reference>", "exec"), namespace)
    results = []
    for call in request["calls"]:
        try:
            results.append(repr(eval(call, namespace)))
        except BaseException:
            results.append(None)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
