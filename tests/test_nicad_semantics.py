"""The nicad profile reproduces NiCad's verdicts (GUIDE, "The clone detector, NiCad semantics")."""

from __future__ import annotations

from cloneprobe.clones import (
    CLONE_TYPES,
    LADDER,
    NICAD,
    DetectorConfig,
    SourceFile,
    find_clones,
)

T1, T2, T2C, T3, T32C = (CLONE_TYPES[name] for name in ("1", "2", "2c", "3", "3-2c"))

# Nine binary operators: `v = a OP b` lines are pairwise different even after blind renaming.
OPERATORS = ["+", "-", "*", "/", "%", "//", "**", "<<", ">>"]
# Operators that appear in no OPERATORS line: replacing a line with one of these removes it
# from the LCS.
OTHER_OPERATORS = ["&", "|", "^", "@", "and", "or"]


def operator_function(ops, name="f") -> str:
    """`def f(a, b):` plus one `v = a OP b` line per operator: 1 + len(ops) printed lines."""
    return f"def {name}(a, b):\n" + "".join(f"    v = a {op} b\n" for op in ops)


def replaced(positions) -> list[str]:
    ops = list(OPERATORS)
    for position, new in zip(positions, OTHER_OPERATORS, strict=False):
        ops[position] = new
    return ops


def nicad(**overrides) -> DetectorConfig:
    return DetectorConfig(profile=NICAD, **{"min_lines": 5, **overrides})


def run(a: str, b: str, config: DetectorConfig, language: str = "py"):
    return find_clones([SourceFile(f"a.{language}", a)], [SourceFile(f"b.{language}", b)], config)


def verdict(a: str, b: str, config: DetectorConfig, language: str = "py"):
    """The single pair's type name, or None when the fragments are not clones."""
    pairs = run(a, b, config, language).pairs
    assert len(pairs) <= 1, pairs
    return pairs[0].clone_type.name if pairs else None


ORIGINAL = """\
def mean_abs(values, scale):
    total = 0
    for v in values:
        if v < 0:
            total = total - v
        else:
            total = total + v
    result = total / len(values)
    return result * scale
"""

# What NiCad's Python grammar ignores: spacing, indentation, comments, blank lines, the
# docstring and backslash continuations. Line breaks inside brackets and one-line suites it
# keeps (tests/test_nicad_grammar.py).
RELAYOUT = """\
def mean_abs( values,  scale ):
    \"\"\"Docstring that NiCad never sees.\"\"\"
    total=0   # running sum

    for v in values :
        # negative values count positively
        if v<0:
              total = total - v
        else:
            total = total + \\
                v
    result = total / len(  values)
    return result*scale
"""

RENAMED = """\
def average(items, factor):
    acc = 0
    for item in items:
        if item < 0:
            acc = acc - item
        else:
            acc = acc + item
    out = acc / count(items)
    return out * factor
"""

RELITERAL = ORIGINAL.replace("total = 0", "total = 100").replace("v < 0", "v < 7")


# --- Type-1 and Type-2 --------------------------------------------------------------------------


def test_layout_and_comment_only_differences_are_type_1():
    report = run(ORIGINAL, RELAYOUT, nicad())
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("1", 100)]


def test_renamed_identifiers_are_type_2_not_type_1():
    assert verdict(ORIGINAL, RENAMED, nicad()) == "2"
    assert verdict(ORIGINAL, RENAMED, nicad(types=(T1,))) is None


def test_changed_literals_are_type_2_not_type_1():
    assert verdict(ORIGINAL, RELITERAL, nicad()) == "2"
    assert verdict(ORIGINAL, RELITERAL, nicad(types=(T1,))) is None


def test_changed_string_and_float_literals_are_type_2():
    a = 'def f(a):\n    x = a * 2.5\n    y = "one"\n    z = g(x, y)\n    return z\n'
    b = "def f(a):\n    x = a * 0.1\n    y = 'two'\n    z = g(x, y)\n    return z\n"
    assert verdict(a, b, nicad()) == "2"


def test_renamed_function_name_alone_is_type_2_because_the_header_is_compared():
    renamed = ORIGINAL.replace("def mean_abs(", "def mean_of_abs(")
    assert verdict(ORIGINAL, renamed, nicad()) == "2"


def test_changed_operator_is_not_type_2():
    changed = ORIGINAL.replace("total - v", "total * v")
    assert verdict(ORIGINAL, changed, nicad(types=(T1, T2))) is None
    assert verdict(ORIGINAL, changed, nicad()) == "3"


SWAP_A = """\
def f(a, b):
    x = a + 1
    y = b * 2
    z = x - y
    return z
"""
SWAP_B = """\
def f(a, b):
    x = b + 1
    y = a * 2
    z = x - y
    return z
"""


def test_swapped_variable_roles_are_blind_type_2_but_not_consistent_type_2c():
    assert verdict(SWAP_A, SWAP_B, nicad()) == "2"
    assert verdict(SWAP_A, SWAP_B, nicad(types=(T2C,))) is None


def test_consistent_renaming_is_type_2c():
    assert verdict(ORIGINAL, RENAMED, nicad(types=(T2C,))) == "2c"
    assert verdict(ORIGINAL, RENAMED, nicad(types=(T1, T2C))) == "2c"


def test_swapped_roles_count_as_changed_lines_under_consistent_type_3():
    # The signature fixes a = x2, b = x3: the two swapped lines differ, the rest match.
    # 5 lines, 2 differ: 40% > 30%, not a clone.
    assert verdict(SWAP_A, SWAP_B, nicad(types=(T32C,))) is None
    tail = "".join(f"    z = z {op} a\n" for op in "+-*/%")
    long_a = SWAP_A.replace("    return z\n", tail)
    long_b = SWAP_B.replace("    return z\n", tail)
    # 9 lines, 2 differ: 22%, a Type-3-2c clone at 7/9 = 77% (77.8, rounded down); blind
    # renaming sees no difference.
    report = run(long_a, long_b, nicad(types=(T2C, T32C)))
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("3-2c", 77)]
    assert verdict(long_a, long_b, nicad(types=(T2, T32C))) == "2"


# --- Type-3: the 30% threshold, both sides ------------------------------------------------------


def test_exactly_30_percent_different_lines_is_type_3():
    a = operator_function(OPERATORS)  # 10 lines
    b = operator_function(replaced([1, 4, 7]))  # 3 of 10 lines changed: LCS 7
    report = run(a, b, nicad())
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("3", 70)]


def test_just_over_30_percent_different_lines_is_not_a_clone():
    a = operator_function(OPERATORS)
    b = operator_function(replaced([1, 4, 7, 8]))  # 4 of 10 changed: 40%
    assert verdict(a, b, nicad()) is None


def test_both_sides_rule_accepts_a_larger_fragment_within_30_percent():
    a = operator_function(OPERATORS)  # 10 lines
    extra = [f"    w = a {op} b\n" for op in OTHER_OPERATORS]
    b = a + "".join(extra[:4])  # 14 lines, LCS 10: (14 - 10) / 14 < 0.3
    report = run(a, b, nicad())
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("3", 71)]


def test_both_sides_rule_rejects_a_fragment_wholly_contained_in_a_much_larger_one():
    a = operator_function(OPERATORS)  # 10 lines, all in b
    extra = [f"    w = a {op} b\n" for op in OTHER_OPERATORS]
    b = a + "".join(extra[:5])  # 15 lines: (15 - 10) / 15 > 0.3 on b's side
    assert verdict(a, b, nicad()) is None
    assert verdict(b, a, nicad()) is None


def test_type_3_similarity_is_over_the_larger_fragment():
    a = operator_function(OPERATORS)  # 10 lines
    b = operator_function(OPERATORS[:8])  # 9 lines, all in a: LCS 9
    report = run(a, b, nicad())
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("3", 90)]


# --- Size limits --------------------------------------------------------------------------------


def test_min_lines_keeps_a_fragment_of_exactly_min_lines():
    source = operator_function(OPERATORS[:4])  # 5 lines
    assert verdict(source, source, nicad(min_lines=5)) == "1"
    assert verdict(source, source, nicad(min_lines=6)) is None


def test_nicad_profile_default_min_lines_is_10():
    ten = operator_function(OPERATORS)
    nine = operator_function(OPERATORS[:8])
    config = DetectorConfig(profile=NICAD)
    assert verdict(ten, ten, config) == "1"
    assert verdict(nine, nine, config) is None


def test_max_lines_keeps_a_fragment_of_exactly_max_lines():
    source = operator_function(OPERATORS)  # 10 lines
    assert verdict(source, source, nicad(max_lines=10)) == "1"
    assert verdict(source, source, nicad(max_lines=9)) is None


def test_size_limits_count_pretty_printed_lines_not_source_lines():
    # 5 statements over 12 source lines: 8 pretty-printed lines (comment and blank lines
    # dropped, the breaks inside the brackets kept, as NiCad's grammar keeps them).
    source = (
        "def f(a,\n      b):\n    # comment\n\n    x = (a +\n         b)\n"
        "    y = x\n    z = y\n\n    w = z\n    return w\n"
    )
    report = run(source, source, nicad(min_lines=8, max_lines=8))
    assert [p.a.size for p in report.pairs] == [8]
    assert verdict(source, source, nicad(min_lines=9)) is None


def test_size_statistics_count_extracted_and_kept_fragments():
    source = operator_function(OPERATORS) + operator_function(OPERATORS[:2], name="g")
    report = run(source, source, nicad(min_lines=5))
    assert (report.system_a.fragments, report.system_a.compared) == (2, 1)
    assert (report.system_b.files, report.system_b.fragments) == (1, 2)


def test_one_line_functions_are_never_extracted_under_nicad():
    one = "def f(x): return x\n"
    assert run(one, one, nicad(min_lines=1)).pairs == ()
    stats = run(one, one, nicad(min_lines=1)).system_a
    assert (stats.fragments, stats.compared) == (1, 0)


def test_two_line_function_is_a_clone_under_nicad_with_min_lines_1():
    two = "def f(x):\n    return x\n"
    assert verdict(two, two, nicad(min_lines=1)) == "1"


# --- Cumulative types ---------------------------------------------------------------------------


def test_type_1_pair_is_found_by_type_2_only_and_type_3_only_runs():
    assert verdict(ORIGINAL, RELAYOUT, nicad(types=(T2,))) == "2"
    report = run(ORIGINAL, RELAYOUT, nicad(types=(T3,)))
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("3", 100)]


def test_type_2_pair_is_found_by_type_3_only_run():
    assert verdict(ORIGINAL, RENAMED, nicad(types=(T3,))) == "3"


def test_ladder_labels_each_pair_with_the_most_specific_type():
    systems_a = [SourceFile("canonical.py", ORIGINAL)]
    systems_b = [
        SourceFile("s1_relayout.py", RELAYOUT),
        SourceFile("s2_renamed.py", RENAMED),
        SourceFile("s3_changed.py", ORIGINAL.replace("total - v", "total * v")),
        SourceFile("s4_other.py", operator_function(OPERATORS)),
    ]
    report = find_clones(systems_a, systems_b, nicad(types=LADDER))
    assert [(p.b.file, p.clone_type.name) for p in report.pairs] == [
        ("s1_relayout.py", "1"),
        ("s2_renamed.py", "2"),
        ("s3_changed.py", "3"),
    ]


# --- Java ---------------------------------------------------------------------------------------

JAVA_A = """\
class A {
    /** Sum of the positive values. */
    public int sum(int[] values) {
        int total = 0;
        for (int v : values) {
            if (v > 0) {
                total += v;
            }
        }
        return total;
    }
}
"""
JAVA_RELAYOUT = """\
class B {
    public int sum(int[] values)
    {
        // running total
        int total=0;
        for (int v : values) { if (v > 0) { total += v; } }
        return total;
    }
}
"""
JAVA_RENAMED = JAVA_A.replace("values", "xs").replace(" v ", " x ").replace("v)", "x)")
JAVA_RENAMED = JAVA_RENAMED.replace("+= v", "+= x").replace("total", "acc").replace("0", "1")
JAVA_EDITED = JAVA_A.replace(
    "        return total;\n", '        System.out.println("done");\n        return total;\n'
)


def java(**overrides) -> DetectorConfig:
    return nicad(language="java", **overrides)


def test_java_layout_and_comments_are_type_1():
    assert verdict(JAVA_A, JAVA_RELAYOUT, java(), "java") == "1"


def test_java_renamed_identifiers_and_literals_are_type_2():
    assert "xs" in JAVA_RENAMED and "acc" in JAVA_RENAMED
    assert verdict(JAVA_A, JAVA_RENAMED, java(), "java") == "2"


def test_java_added_statement_is_type_3():
    # 6 compared lines (closing braces are not compared) vs 7: LCS 6, 85.7% rounded down.
    report = run(JAVA_A, JAVA_EDITED, java(), "java")
    assert [(p.clone_type.name, p.similarity) for p in report.pairs] == [("3", 85)]


def test_java_closing_braces_count_for_size_but_are_not_compared():
    # Same statements, but b closes a block earlier: one `}` moves, the compared lines are equal.
    a = "class A { void f(int a) {\n if (a > 0) {\n a = 1;\n a = 2;\n }\n a = 3;\n } }\n"
    b = "class A { void f(int a) {\n if (a > 0) {\n a = 1;\n }\n a = 2;\n a = 3;\n } }\n"
    report = run(a, b, java(min_lines=7, max_lines=7), "java")
    assert [(p.a.size, p.b.size, p.clone_type.name) for p in report.pairs] == [(7, 7, "1")]
    assert run(a, b, java(min_lines=8), "java").pairs == ()


def test_java_system_from_folders_detects_language(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "A.java").write_text(JAVA_A)
    (tmp_path / "b" / "B.java").write_text(JAVA_RENAMED)
    report = find_clones(tmp_path / "a", tmp_path / "b", nicad())
    assert [(p.a.file, p.b.file, p.clone_type.name) for p in report.pairs] == [
        ("A.java", "B.java", "2")
    ]


# --- Embedded pairs, cross-clone mode, classes --------------------------------------------------

NESTED = """\
def outer(a, b):
    x = a + b
    def inner(q):
        y = q * 2
        z = y - 1
        w = z + y
        return w
    return inner(x)
"""


def test_nested_pair_is_pruned_when_the_outer_functions_are_a_pair():
    report = run(NESTED, NESTED, nicad(min_lines=3))
    assert [(p.a.name, p.b.name) for p in report.pairs] == [("outer", "outer")]


def test_nested_pair_is_kept_without_embedded_pruning():
    report = run(NESTED, NESTED, nicad(min_lines=3, prune_embedded=False))
    assert sorted((p.a.name, p.b.name) for p in report.pairs) == [
        ("inner", "inner"),
        ("outer", "outer"),
    ]


def test_nested_pair_is_kept_when_the_outer_functions_are_not_a_pair():
    different = "".join(f"    c = a {op} b\n" for op in "+-*/%")
    other_outer = NESTED.replace("    x = a + b\n", different)
    report = run(NESTED, other_outer, nicad(min_lines=3))
    assert [(p.a.name, p.b.name) for p in report.pairs] == [("inner", "inner")]


def test_pairs_within_one_system_are_not_reported():
    twice = operator_function(OPERATORS, "f") + operator_function(OPERATORS, "g")
    report = find_clones([SourceFile("a.py", twice)], [SourceFile("b.py", "x = 1\n")], nicad())
    assert report.pairs == ()


def test_clone_class_groups_a_canonical_with_its_three_cloned_samples():
    canonical = [SourceFile("canonical.py", ORIGINAL)]
    samples = [
        SourceFile("s1.py", RELAYOUT),
        SourceFile("s2.py", RENAMED),
        SourceFile("s3.py", ORIGINAL.replace("total - v", "total * v")),
        SourceFile("s4.py", operator_function(OPERATORS)),
    ]
    report = find_clones(canonical, samples, nicad())
    assert len(report.pairs) == 3
    (clone_class,) = report.classes
    assert [f.file for f in clone_class.fragments] == ["canonical.py", "s1.py", "s2.py", "s3.py"]
    assert clone_class.pairs == 3
    assert clone_class.clone_type == "3"  # the least specific type among its pairs


def test_unconnected_pairs_form_separate_classes():
    f_ops = operator_function(OPERATORS, "f")
    g_src = operator_function(replaced([0, 1, 2, 3, 4, 5]), "g")
    canonical = [SourceFile("c1.py", f_ops), SourceFile("c2.py", g_src)]
    samples = [SourceFile("s1.py", f_ops), SourceFile("s2.py", f_ops), SourceFile("s3.py", g_src)]
    report = find_clones(canonical, samples, nicad())
    assert [[f.file for f in c.fragments] for c in report.classes] == [
        ["c1.py", "s1.py", "s2.py"],
        ["c2.py", "s3.py"],
    ]
    assert [(c.id, c.pairs, c.clone_type) for c in report.classes] == [(1, 2, "1"), (2, 1, "1")]


def test_report_names_the_nicad_profile_and_its_settings():
    data = run(ORIGINAL, RENAMED, nicad()).to_dict()
    assert data["profile"] == "nicad"
    assert data["settings"]["min_lines"] == 5
    assert data["settings"]["compare_header"] is True
    assert [t["name"] for t in data["settings"]["types"]] == ["1", "2", "3"]
    assert [(p["type"], p["similarity"], p["trivial"]) for p in data["pairs"]] == [
        ("2", 100, False)
    ]


def test_nicad_profile_never_marks_pairs_trivial():
    two = "def f(x):\n    return x\n"
    report = run(two, two, nicad(min_lines=1))
    assert [p.trivial for p in report.pairs] == [False]
    assert len(report.classes) == 1


def test_comment_inside_concatenated_string_is_still_type_1():
    a = 'def f(a):\n    s = ("abc"\n         "def")\n    t = s + a\n    u = t * 2\n    return u\n'
    b = a.replace('"abc"\n', '"abc"  # first half\n')
    assert verdict(a, b, nicad()) == "1"


def test_file_granularity_compares_whole_files_without_module_docstring():
    a = [SourceFile("a.py", '"""Module doc."""\nimport os\n\nX = 1\n\ndef f(v):\n    return v\n')]
    b = [SourceFile("b.py", "import os\nX = 1\n# note\ndef f(v):\n  return v\n")]
    config = DetectorConfig(profile=NICAD, granularity="files", min_lines=1)
    (pair,) = find_clones(a, b, config).pairs
    assert (pair.clone_type.name, pair.a.name, pair.b.name) == ("1", "a.py", "b.py")
    assert pair.a.size == 4  # import, assignment, def header, return
