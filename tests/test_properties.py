"""Properties over random small Python functions: renaming, layout and comments.

A tiny statement grammar (assignments, calls with literal arguments, if/for blocks, returns)
is drawn as a tree and rendered to source under a layout (indent unit, wrapped call arguments,
comments) and an identifier map, so the same function can be printed several ways.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from cloneprobe.clones import (
    CLONE_TYPES,
    DEFAULT,
    NICAD,
    DetectorConfig,
    FragmentExtractor,
    SourceFile,
    find_clones,
    get_language,
)

NAMES = ["a", "b", "total", "items", "count", "helper", "compute", "value", "acc", "i"]
FRESH = [f"r{k}_{word}" for k, word in enumerate(["zeta", "eta", "theta", "iota", "kappa"])]
FRESH += [f"s{k}_{word}" for k, word in enumerate(["lam", "mu", "nu", "xi", "pi"])]
OPERATORS = ["+", "-", "*", "//", "%"]

names = st.sampled_from(NAMES)
literals = st.one_of(
    st.integers(0, 99).map(str),
    st.sampled_from(['"ab"', "'xy'", '""', "2.5", "0.1"]),
)


@st.composite
def expressions(draw, depth=0):
    kind = draw(st.sampled_from(["name", "literal", "binary", "call"] if depth < 2 else ["name"]))
    if kind == "name":
        return ("name", draw(names))
    if kind == "literal":
        return ("literal", draw(literals))
    if kind == "binary":
        return (
            "binary",
            draw(st.sampled_from(OPERATORS)),
            draw(expressions(depth + 1)),
            draw(expressions(depth + 1)),
        )
    args = draw(
        st.lists(
            st.one_of(literals.map(lambda v: ("literal", v)), names.map(lambda n: ("name", n))),
            max_size=4,
        )
    )
    return ("call", draw(names), args)


@st.composite
def calls(draw):
    args = draw(st.lists(literals.map(lambda v: ("literal", v)), min_size=1, max_size=4))
    return ("call", draw(names), args)


@st.composite
def statements(draw, depth=0):
    simple = ["assign", "call", "return"]
    kind = draw(st.sampled_from(simple + (["if", "for"] if depth < 2 else [])))
    if kind == "assign":
        return ("assign", draw(names), draw(expressions()))
    if kind == "call":
        return ("expr", draw(calls()))
    if kind == "return":
        return ("return", draw(expressions()))
    body = draw(st.lists(statements(depth + 1), min_size=1, max_size=3))
    if kind == "for":
        return ("for", draw(names), draw(calls()), body)
    orelse = draw(st.none() | st.lists(statements(depth + 1), min_size=1, max_size=2))
    return ("if", draw(names), draw(st.integers(0, 9)), body, orelse)


@st.composite
def functions(draw):
    params = draw(st.lists(names, min_size=0, max_size=3, unique=True))
    body = draw(st.lists(statements(), min_size=1, max_size=5))
    return ("def", draw(names), params, body)


@dataclass(frozen=True)
class Layout:
    indent: str = "    "
    wrap_calls: bool = False
    comments: bool = False
    spaces: str = " "


def used_names(node) -> set[str]:
    found: set[str] = set()

    def visit(item):
        if isinstance(item, tuple) and item and item[0] == "name":
            found.add(item[1])
        elif isinstance(item, (tuple, list)):
            for part in item:
                visit(part)

    visit(node)
    _, name, params, _ = node
    return found | {name, *params}


def render(function, layout: Layout = Layout(), rename=None) -> str:
    """Source text of `function` under `layout`, identifiers mapped through `rename`."""
    rename = rename or {}
    sp = layout.spaces
    counter = iter(range(10_000))

    def ident(name):
        return rename.get(name, name)

    def comment():
        return f"  # note {next(counter)}" if layout.comments else ""

    def expr(node, level):
        kind = node[0]
        if kind == "name":
            return ident(node[1])
        if kind == "literal":
            return node[1]
        if kind == "binary":
            return f"({expr(node[2], level)}{sp}{node[1]}{sp}{expr(node[3], level)})"
        args = [expr(arg, level) for arg in node[2]]
        if layout.wrap_calls and args:
            inner = layout.indent * (level + 2)
            joined = f",{comment()}\n{inner}".join(args)
            return f"{ident(node[1])}(\n{inner}{joined}{comment()}\n{inner})"
        return f"{ident(node[1])}({f',{sp}'.join(args)})"

    def block(body, level):
        out = []
        for node in body:
            out.extend(statement(node, level))
        return out

    def line(level, text):
        return layout.indent * level + text

    def statement(node, level):
        kind = node[0]
        lines = []
        if layout.comments:
            lines.append(line(level, f"# before {next(counter)}"))
        if kind == "assign":
            lines.append(line(level, f"{ident(node[1])}{sp}={sp}{expr(node[2], level)}{comment()}"))
        elif kind == "expr":
            lines.append(line(level, expr(node[1], level) + comment()))
        elif kind == "return":
            lines.append(line(level, f"return {expr(node[1], level)}{comment()}"))
        elif kind == "for":
            header = f"for {ident(node[1])} in {expr(node[2], level)}:{comment()}"
            lines.append(line(level, header))
            lines.extend(block(node[3], level + 1))
        else:
            header = f"if {ident(node[1])}{sp}>{sp}{node[2]}:{comment()}"
            lines.append(line(level, header))
            lines.extend(block(node[3], level + 1))
            if node[4] is not None:
                lines.append(line(level, f"else:{comment()}"))
                lines.extend(block(node[4], level + 1))
        return lines

    _, name, params, body = function
    header = f"def {ident(name)}({f',{sp}'.join(ident(p) for p in params)}):{comment()}"
    return "\n".join([header, *block(body, 1)]) + "\n"


@st.composite
def bijective_renames(draw, function):
    """A bijection from the function's identifiers onto fresh names it does not use."""
    used = sorted(used_names(function))
    targets = draw(st.permutations(FRESH))
    return dict(zip(used, targets, strict=False))


layouts = st.builds(
    Layout,
    indent=st.sampled_from(["  ", "    ", "\t", "   "]),
    wrap_calls=st.booleans(),
    comments=st.booleans(),
    spaces=st.sampled_from([" ", "  "]),
)

NICAD_ALL = DetectorConfig(profile=NICAD, min_lines=1)
NICAD_2C = DetectorConfig(profile=NICAD, min_lines=1, types=(CLONE_TYPES["2c"],))
DEFAULT_ALL = DetectorConfig(profile=DEFAULT)
DEFAULT_2C = DetectorConfig(profile=DEFAULT, types=(CLONE_TYPES["2c"],))
EXTRACTOR = FragmentExtractor(get_language("python"))


def verdicts(a: str, b: str, config: DetectorConfig) -> list[str]:
    report = find_clones([SourceFile("a.py", a)], [SourceFile("b.py", b)], config)
    return [p.clone_type.name for p in report.pairs]


def only_fragment(source: str):
    (fragment,) = EXTRACTOR.extract(SourceFile("t.py", source))
    assert not fragment.has_errors, source
    return fragment


def test_generator_renders_parseable_functions_in_every_layout():
    function = (
        "def",
        "f",
        ["a", "b"],
        [
            (
                "for",
                "i",
                ("call", "helper", [("literal", "3"), ("literal", '"ab"')]),
                [
                    (
                        "if",
                        "i",
                        2,
                        [("assign", "acc", ("binary", "+", ("name", "acc"), ("name", "i")))],
                        [("expr", ("call", "compute", [("literal", "2.5")]))],
                    ),
                ],
            ),
            ("return", ("name", "acc")),
        ],
    )
    plain = render(function)
    assert plain == (
        "def f(a, b):\n"
        '    for i in helper(3, "ab"):\n'
        "        if i > 2:\n"
        "            acc = (acc + i)\n"
        "        else:\n"
        "            compute(2.5)\n"
        "    return acc\n"
    )
    fancy = render(function, Layout(indent="\t", wrap_calls=True, comments=True, spaces="  "))
    assert "#" in fancy and "\t" in fancy
    assert only_fragment(fancy).lines == only_fragment(plain).lines
    renamed = render(function, rename={"acc": "total"})
    assert "total = (total + i)" in renamed


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_consistent_renaming_never_loses_the_type_2_verdict(data):
    function = data.draw(functions())
    rename = data.draw(bijective_renames(function))
    original, renamed = render(function), render(function, rename=rename)
    only_fragment(renamed)
    for ladder, consistent in ((NICAD_ALL, NICAD_2C), (DEFAULT_ALL, DEFAULT_2C)):
        assert verdicts(original, renamed, ladder) in (["1"], ["2"]), (original, renamed)
        assert verdicts(original, renamed, consistent) == ["2c"], (original, renamed)


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_reindenting_rewrapping_and_comments_never_change_the_verdict(data):
    function = data.draw(functions())
    layout = data.draw(layouts)
    original, variant = render(function), render(function, layout)
    assert only_fragment(variant).lines == only_fragment(original).lines
    assert verdicts(original, variant, DEFAULT_ALL) == ["1"], (original, variant)
    # NiCad's grammar keeps line breaks inside brackets: re-indenting, spacing and comments
    # keep Type-1 there, re-wrapping calls need not (tests/test_nicad_grammar.py).
    unwrapped = render(function, replace(layout, wrap_calls=False))
    assert verdicts(original, unwrapped, NICAD_ALL) == ["1"], (original, unwrapped)


@given(st.data())
@settings(max_examples=30, deadline=None)
def test_layout_changes_keep_the_verdict_against_a_renamed_copy(data):
    function = data.draw(functions())
    rename = data.draw(bijective_renames(function))
    layout = data.draw(layouts)
    renamed = render(function, rename=rename)
    variant = render(function, layout)
    assert verdicts(renamed, variant, DEFAULT_ALL) == verdicts(
        renamed, render(function), DEFAULT_ALL
    )
    unwrapped = render(function, replace(layout, wrap_calls=False))
    assert verdicts(renamed, unwrapped, NICAD_ALL) == verdicts(renamed, render(function), NICAD_ALL)
