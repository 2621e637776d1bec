"""The nicad profile prints fragments as NiCad's Python grammar does (GUIDE, "Pretty-printing").

NiCad's `python.grm` is newline-sensitive: line breaks inside brackets and around operators
are kept where the source has them (except where the grammar parses a break as an
expression's optional trailing end-of-line, which NiCad's extractor removes), a one-line suite
stays one line, only a leading triple-double-quoted string is a docstring, and `print` is a
keyword. The default profile stays layout-independent.
"""

from __future__ import annotations

import pytest

from cloneprobe.benchmarks import canonical_source, load_humaneval, nicad_min_lines
from cloneprobe.clones import (
    CLONE_TYPES,
    DEFAULT,
    NICAD,
    ConfigError,
    DetectorConfig,
    FragmentExtractor,
    SourceFile,
    blank_docstrings,
    clone_type,
    compare_systems,
    find_clones,
    get_language,
)
from cloneprobe.clones.fragment import render_line
from cloneprobe.clones.normalize import compared_lines

PYTHON = get_language("python")


def printed(source: str, layout: str = "source") -> list[str]:
    (fragment,) = FragmentExtractor(PYTHON, layout).extract(SourceFile("t.py", source))
    return [render_line(line) for line in fragment.lines]


def verdict(a: str, b: str, config: DetectorConfig) -> str | None:
    pairs = find_clones([SourceFile("a.py", a)], [SourceFile("b.py", b)], config).pairs
    assert len(pairs) <= 1
    return pairs[0].clone_type.name if pairs else None


def nicad(**overrides) -> DetectorConfig:
    return DetectorConfig(profile=NICAD, **{"min_lines": 1, **overrides})


TALL_DICT = (
    "def f(key):\n"
    "    table = {\n" + "".join(f"        'k{i}': {i},\n" for i in range(10)) + "    }\n"
    "    return table[key]\n"
)
FLAT_DICT = (
    "def f(key):\n"
    "    table = {" + ", ".join(f"'k{i}': {i}" for i in range(10)) + ",}\n"
    "    return table[key]\n"
)


# --- line breaks inside brackets ----------------------------------------------------------------


def test_dict_written_over_12_lines_is_12_lines_and_on_one_line_is_one():
    tall = printed(TALL_DICT)
    assert tall[1:13] == ["table = {", *(f"'k{i}' : {i} ," for i in range(10)), "}"]
    assert len(tall) == 14  # header, 12 dict lines, return
    assert len(printed(FLAT_DICT)) == 3


def test_tall_and_flat_dict_are_not_type_1_under_nicad_but_are_under_default():
    assert verdict(TALL_DICT, FLAT_DICT, nicad()) != "1"
    assert verdict(TALL_DICT, FLAT_DICT, DetectorConfig(profile=DEFAULT)) == "1"


def test_list_items_call_arguments_and_parameters_keep_their_breaks():
    source = (
        "def f(a,\n      b):\n    xs = [a,\n          b]\n    return g(xs,\n             key=a)\n"
    )
    assert printed(source) == [
        "def f ( a ,",
        "b ) :",
        "xs = [ a ,",
        "b ]",
        "return g ( xs ,",
        "key = a )",
    ]


def test_break_after_an_opening_bracket_is_kept():
    assert printed("def f(a):\n    return g(\n        a, 1)\n") == [
        "def f ( a ) :",
        "return g (",
        "a , 1 )",
    ]


def test_break_before_a_closing_bracket_after_an_expression_is_dropped_after_a_comma_kept():
    # `[test]` ends with `[opt endofline]`, which NiCad's extractor removes (reduceEndOfLines2);
    # after a trailing comma the break is the bracket's own `[repeat endofline]` and stays.
    without_comma = printed("def f(a):\n    xs = [\n        a\n    ]\n    return xs\n")
    with_comma = printed("def f(a):\n    xs = [\n        a,\n    ]\n    return xs\n")
    assert without_comma == ["def f ( a ) :", "xs = [", "a ]", "return xs"]
    assert with_comma == ["def f ( a ) :", "xs = [", "a ,", "]", "return xs"]


def test_breaks_around_boolean_and_arithmetic_operators_are_kept():
    source = "def f(a, b):\n    return (a and\n            b\n            or a +\n            b)\n"
    assert printed(source) == [
        "def f ( a , b ) :",
        "return ( a and",
        "b",
        "or a +",
        "b )",
    ]


def test_comprehension_for_after_a_break_joins_the_expression():
    source = "def f(xs):\n    return [x\n            for x in xs\n            if x]\n"
    assert printed(source) == ["def f ( xs ) :", "return [ x for x in xs", "if x ]"]


def test_backslash_continuation_is_one_line():
    source = "def f(a, b):\n    y = a + \\\n        b\n    return y\n"
    assert printed(source) == ["def f ( a , b ) :", "y = a + b", "return y"]


def test_comments_and_blank_lines_inside_brackets_are_not_lines():
    source = "def f(a):\n    xs = [a,  # first\n\n          a]\n    return xs\n"
    assert printed(source) == ["def f ( a ) :", "xs = [ a ,", "a ]", "return xs"]


# --- suites and headers -------------------------------------------------------------------------


def test_one_line_suite_stays_one_line():
    source = (
        "def f(x, y):\n"
        "    if x: return y\n"
        "    elif y: return x\n"
        "    else: return 0\n"
        "    for i in y: x += i\n"
    )
    assert printed(source) == [
        "def f ( x , y ) :",
        "if x : return y",
        "elif y : return x",
        "else : return 0",
        "for i in y : x += i",
    ]


def test_one_line_suite_is_not_type_1_with_its_two_line_form_under_nicad_only():
    tail = "    z = x + y\n    w = z * 2\n    v = w - x\n    u = v // y\n    return u\n"
    inline = "def f(x, y):\n    if x: return y\n" + tail
    block = "def f(x, y):\n    if x:\n        return y\n" + tail
    assert len(printed(inline)) == 7 and len(printed(block)) == 8
    assert verdict(inline, block, nicad()) == "3"
    assert verdict(inline, block, DetectorConfig(profile=DEFAULT)) == "1"


def test_compound_header_is_one_line_and_its_block_below_it():
    source = "def f(x):\n    while x > 0 :\n        x -= 1\n    return x\n"
    assert printed(source) == ["def f ( x ) :", "while x > 0 :", "x -= 1", "return x"]


def test_semicolon_separated_statements_stay_on_their_line():
    assert printed("def f(a):\n    x = 1; y = 2\n    return x + y\n") == [
        "def f ( a ) :",
        "x = 1 ; y = 2",
        "return x + y",
    ]


# --- docstrings ---------------------------------------------------------------------------------


def test_leading_triple_double_quoted_string_is_the_docstring():
    assert printed('def f(a):\n    """Doc\n    more."""\n    return a\n') == [
        "def f ( a ) :",
        "return a",
    ]


@pytest.mark.parametrize(
    "leading",
    ["'''Doc.'''", "'Doc.'", '"Doc."', 'r"""Doc."""'],
    ids=["3single", "1single", "1double", "raw"],
)
def test_other_leading_strings_stay_statements_under_nicad_only(leading):
    source = f"def f(a):\n    {leading}\n    return a\n"
    assert printed(source) == ["def f ( a ) :", leading, "return a"]
    assert printed(source, "statements") == ["def f ( a ) :", "return a"]


def test_nested_function_docstring_is_dropped_too():
    source = 'def f(a):\n    def g(b):\n        """Doc."""\n        return b\n    return g(a)\n'
    outer, _ = FragmentExtractor(PYTHON, "source").extract(SourceFile("t.py", source))
    assert [render_line(line) for line in outer.lines][:3] == [
        "def f ( a ) :",
        "def g ( b ) :",
        "return b",
    ]


def test_triple_double_quoted_string_after_a_statement_is_a_statement():
    source = 'def f(a):\n    import math\n    """Doc."""\n    return a\n'
    assert printed(source) == ["def f ( a ) :", "import math", '"""Doc."""', "return a"]


# --- strings over several rows ------------------------------------------------------------------

# HumanEval/157's shape: a leading `'''` string (a statement in NiCad's grammar) over 9 rows
STUB = (
    "def right_angle_triangle(a, b, c):\n"
    "    '''\n"
    "    Given the lengths of the three sides of a triangle. Return True if the three\n"
    "    sides form a right-angled triangle, False otherwise.\n"
    "\n"
    "    A right-angled triangle is a triangle in which one angle is right angle or\n"
    "    90 degree.\n"
    "    Example:\n"
    "    right_angle_triangle(3, 4, 5) == True\n"
    "    right_angle_triangle(1, 2, 3) == False\n"
    "    '''\n"
)
SOLVED = STUB + "    return a*a == b*b + c*c or b*b == a*a + c*c or c*c == a*a + b*b\n"


def test_string_over_several_rows_is_one_line_per_row_and_blank_rows_are_none():
    lines = printed(SOLVED)
    assert lines[:3] == [
        "def right_angle_triangle ( a , b , c ) :",
        "'''",
        "Given the lengths of the three sides of a triangle. Return True if the three",
    ]
    assert lines[-2:] == ["'''", "return a * a == b * b + c * c or b * b == a * a + c * c "
                          "or c * c == a * a + b * b"]  # fmt: skip
    assert len(lines) == 11  # header, 9 string rows (the blank one is no line), return
    assert len(printed(SOLVED, "statements")) == 2  # the default profile: a docstring, dropped


def test_tokens_around_a_string_over_several_rows_stay_on_its_first_and_last_rows():
    source = 'def f(a):\n    b = """x\n    y""".format(a)\n    return b\n'
    assert printed(source) == ["def f ( a ) :", 'b = """x', 'y""" . format ( a )', "return b"]


def test_rows_of_a_string_count_for_size_before_renaming():
    (fragment,) = FragmentExtractor(PYTHON, "source").extract(SourceFile("t.py", STUB))
    assert fragment.size == 10  # header and 9 rows: above NiCad's minlines 10 only this way
    config = nicad(min_lines=10, types=(clone_type("3-1", "0.3", "none"),))
    assert find_clones([SourceFile("a.py", SOLVED)], [SourceFile("b.py", STUB)], config).pairs


def test_rows_of_a_string_are_compared_without_renaming():
    # the stub shares the header and all 9 rows with the solution: 10 of 11 lines, 90%
    type_3_1 = clone_type("3-1", "0.3", "none")
    pairs = find_clones(
        [SourceFile("a.py", SOLVED)], [SourceFile("b.py", STUB)], nicad(types=(type_3_1,))
    ).pairs
    assert [(p.clone_type.name, p.similarity) for p in pairs] == [("3-1", 90)]


@pytest.mark.parametrize("rename", ["blind", "consistent"])
def test_renaming_folds_the_rows_of_a_string_into_one_line(rename):
    (fragment,) = FragmentExtractor(PYTHON, "source").extract(SourceFile("t.py", SOLVED))
    lines = compared_lines(fragment, rename, header=True)
    assert len(lines) == 3 and lines[1] == ['"x"']
    # header, "x", return: 2 of 3 lines shared, 67%, under the 70% of Type-3
    type_3 = clone_type("3r", "0.3", rename)
    config = nicad(types=(type_3,))
    assert not find_clones([SourceFile("a.py", SOLVED)], [SourceFile("b.py", STUB)], config).pairs


# --- a body that dedents past its first line -----------------------------------------------------

NESTED = (
    "def count(n):\n"
    "    def is_pal(k):\n"
    "        return str(k) == str(k)[::-1]\n"
    "    evens = 0\n"
    "    for i in range(n):\n"
    "        if i % 2 == 0 and is_pal(i):\n"
    "            evens += 1\n"
    "    return evens\n"
)
# the same with the nested `def` line lost (HumanEval/107's shape in the study's own samples):
# an IndentationError to Python, a function of 7 lines to NiCad's grammar
LOST_LINE = NESTED.replace("    def is_pal(k):\n", "") + "def other():\n    return 1\n"


def test_lines_indented_past_the_def_after_a_dedent_stay_in_the_function_under_nicad():
    first, other = FragmentExtractor(PYTHON, "source").extract(SourceFile("t.py", LOST_LINE))
    assert (first.start_line, first.end_line, first.size) == (1, 7, 7)
    printed_lines = [render_line(line) for line in first.lines]
    assert printed_lines[2:4] == ["evens = 0", "for i in range ( n ) :"]
    assert first.has_errors  # not Python, though tree-sitter flags nothing
    assert (other.name, other.start_line) == ("other", 8)
    # the default profile keeps tree-sitter's reading: the function ends at the dedent
    default_first = FragmentExtractor(PYTHON).extract(SourceFile("t.py", LOST_LINE))[0]
    assert default_first.end_line == 2


def test_a_sample_with_a_lost_line_is_still_nicads_type_3_of_its_canonical():
    assert verdict(NESTED, LOST_LINE.split("def other")[0], nicad()) == "3"


# --- keywords -----------------------------------------------------------------------------------


PRINTING = "def f(a):\n    b = a + 1\n    print(b)\n    return b\n"
SHOWING = "def f(a):\n    b = a + 1\n    show(b)\n    return b\n"


def test_print_is_a_keyword_never_renamed_under_nicad():
    (fragment,) = FragmentExtractor(PYTHON, "source").extract(SourceFile("t.py", PRINTING))
    assert ("other", "print") in fragment.lines[2]
    assert verdict(PRINTING, SHOWING, nicad(types=(CLONE_TYPES["2"],))) is None
    assert verdict(PRINTING, SHOWING, nicad()) == "3"


def test_print_stays_an_identifier_under_the_default_profile():
    assert verdict(PRINTING, SHOWING, DetectorConfig(profile=DEFAULT)) == "2"


# --- the profiles and their layouts -------------------------------------------------------------


def test_each_profile_names_its_layout():
    assert (NICAD.layout, DEFAULT.layout) == ("source", "statements")


def test_fragments_of_another_layout_are_refused_with_a_message():
    fragments = FragmentExtractor(PYTHON).extract(SourceFile("t.py", TALL_DICT))
    with pytest.raises(ConfigError, match="layout"):
        compare_systems(fragments, fragments, nicad())


def test_unknown_layout_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown layout"):
        FragmentExtractor(PYTHON, "tokens")


# --- HumanEval/19: the pairs that were lost to layout --------------------------------------------


def test_humaneval_19_canonical_keeps_its_multi_line_dict_above_nicads_floor():
    task = load_humaneval().get("HumanEval/19")
    canonical = SourceFile("canonical.py", canonical_source(task))
    (old,) = FragmentExtractor(PYTHON, "statements").extract(canonical)
    (new,) = FragmentExtractor(PYTHON, "source").extract(canonical)
    assert old.size == 3  # header, dict, return: under the 5-line floor, every pair lost
    assert new.size == 13  # header, `value_map = {`, ten entries (the last with `}`), return
    assert new.size >= nicad_min_lines(task) >= 5

    sample = SourceFile("sample.py", task.prompt + task.canonical_solution)
    config = DetectorConfig(profile=NICAD, min_lines=nicad_min_lines(task))
    (pair,) = find_clones([canonical], [sample], config).pairs
    assert pair.clone_type.name == "1"


# --- samples prepared as the study prepared them ------------------------------------------------


def test_blank_docstrings_removes_every_docstring_and_keeps_line_numbers():
    program = (
        "def f(a):\n"
        "    import math\n"
        "    '''Doc\n"
        "    more.'''\n"
        "    x = 's'\n"
        "    return a\n"
        "def g():\n"
        "    'only statement'\n"
        "def h(a, b\n"
    )
    blanked = blank_docstrings(program)
    assert blanked.count("\n") == program.count("\n")
    assert "Doc" not in blanked and "more." not in blanked
    assert "x = 's'" in blanked and "'only statement'" in blanked  # a body is never emptied
    f = FragmentExtractor(PYTHON, "source").extract(SourceFile("t.py", blanked))[0]
    assert [render_line(line) for line in f.lines] == [
        "def f ( a ) :",
        "import math",
        "x = 's'",
        "return a",
    ]
    assert (f.start_line, f.end_line) == (1, 6)
