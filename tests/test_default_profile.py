"""The default profile: token LCS over the body, short canonicals seen, trivial pairs apart."""

from __future__ import annotations

import pytest

from cloneprobe.clones import (
    CLONE_TYPES,
    DEFAULT,
    NICAD,
    ConfigError,
    DetectorConfig,
    SourceFile,
    find_clones,
)

TOP3 = "def top3(l):\n    return sorted(set(l), key=lambda x: -x)[:3]\n"  # 20 body tokens


def run(a: str, b: str, config: DetectorConfig | None = None):
    return find_clones([SourceFile("a.py", a)], [SourceFile("b.py", b)], config)


def summary(report):
    return [(p.clone_type.name, p.similarity, p.trivial) for p in report.pairs]


# --- Short canonicals ---------------------------------------------------------------------------


def test_default_is_the_default_profile():
    assert DetectorConfig().profile is DEFAULT
    assert run(TOP3, TOP3).to_dict()["profile"] == "default"


def test_default_profile_finds_a_two_line_canonical_that_nicad_cannot():
    assert summary(run(TOP3, TOP3)) == [("1", 100, False)]
    assert run(TOP3, TOP3, DetectorConfig(profile=NICAD, min_lines=5)).pairs == ()
    assert run(TOP3, TOP3, DetectorConfig(profile=NICAD)).pairs == ()


def test_default_profile_finds_a_three_line_canonical():
    canonical = "def evens(xs):\n    out = [x for x in xs if x % 2 == 0]\n    return out\n"
    renamed = "def evens(values):\n    res = [v for v in values if v % 2 == 0]\n    return res\n"
    assert summary(run(canonical, renamed)) == [("2", 100, False)]
    assert run(canonical, renamed, DetectorConfig(profile=NICAD, min_lines=5)).pairs == ()


def test_default_profile_pairs_a_one_line_function_with_its_two_line_form():
    one_liner = "def top3(l): return sorted(set(l), key=lambda x: -x)[:3]\n"
    assert summary(run(TOP3, one_liner)) == [("1", 100, False)]


def test_default_profile_compares_tokens_so_a_small_edit_in_one_line_is_type_3():
    edited = TOP3.replace("[:3]", "[:5]").replace("-x", "x")  # one token gone, one literal
    report = run(TOP3, edited)
    # Blind renaming hides the literal; the LCS misses the `-`: 19 of 20 tokens.
    assert summary(report) == [("3", 95, False)]
    assert run(TOP3, edited, DetectorConfig(profile=NICAD, min_lines=1)).pairs == ()


def test_default_profile_threshold_is_30_percent_of_tokens():
    # Token LCS against a 10-token body: 4 tokens missing is 40%, 2 missing is 20%.
    canonical = "def f(a, b, c, d, e):\n    return a + b - c * d / e\n"  # 10 tokens
    three_off = "def f(a, b, c, d, e):\n    return a + b - c\n"  # 6 tokens, LCS 6: 40% of 10
    two_off = "def f(a, b, c, d, e):\n    return a + b - c * d\n"  # 8 tokens: 20% of 10
    config = DetectorConfig(min_tokens=0)
    assert run(canonical, three_off, config).pairs == ()
    assert summary(run(canonical, two_off, config)) == [("3", 80, False)]


# --- The signature is not compared --------------------------------------------------------------


def test_default_profile_does_not_compare_the_signature():
    other_signature = "def largest_three(l, k=3, *, reverse=True):\n" + TOP3.split("\n", 1)[1]
    assert summary(run(TOP3, other_signature)) == [("1", 100, False)]


def test_nicad_profile_compares_the_signature():
    other_signature = "def largest_three(l, k=3, *, reverse=True):\n" + TOP3.split("\n", 1)[1]
    config = DetectorConfig(profile=NICAD, min_lines=1)
    assert run(TOP3, other_signature, config).pairs == ()
    assert summary(run(TOP3, TOP3, config)) == [("1", 100, False)]


def test_default_profile_consistent_renaming_numbers_parameters_from_the_signature():
    # Parameters swapped in the signature only: the bodies read the same tokens but the
    # consistent numbering (which starts at the signature) tells a from b.
    a = "def f(a, b):\n    return a - b * 2 + a // b - 7\n"
    b = "def f(b, a):\n    return a - b * 2 + a // b - 7\n"
    assert summary(run(a, b)) == [("1", 100, False)]
    assert run(a, b, DetectorConfig(types=(CLONE_TYPES["2c"],))).pairs == ()


# --- Trivial pairs ------------------------------------------------------------------------------


def test_body_under_12_tokens_pairs_as_trivial():
    short = "def n(s):\n    return len(s)\n"  # 5 body tokens
    report = run(short, short)
    assert summary(report) == [("1", 100, True)]
    assert report.clone_pairs == ()
    assert report.trivial_pairs == report.pairs
    assert report.classes == ()
    assert report.to_dict()["pairs"][0]["trivial"] is True


def test_token_floor_boundary_12_tokens_is_not_trivial_11_is():
    eleven = "def f(a, b, c, d):\n    return g(a, b, c, d)\n"
    twelve = "def f(a, b, c, d):\n    return -g(a, b, c, d)\n"
    assert summary(run(eleven, eleven)) == [("1", 100, True)]
    assert summary(run(twelve, twelve)) == [("1", 100, False)]


def test_token_floor_counts_body_tokens_only():
    # Long signature, 5-token body: still trivial.
    source = "def f(alpha, beta, gamma, delta, epsilon=1, zeta=2):\n    return len(alpha)\n"
    assert summary(run(source, source)) == [("1", 100, True)]


def test_min_tokens_zero_turns_the_trivial_floor_off():
    short = "def n(s):\n    return len(s)\n"
    report = run(short, short, DetectorConfig(min_tokens=0))
    assert summary(report) == [("1", 100, False)]
    assert len(report.classes) == 1


def test_trivial_pairs_are_left_out_of_classes_but_real_pairs_stay():
    short = "def n(s):\n    return len(s)\n"
    report = find_clones(
        [SourceFile("a.py", short + TOP3)], [SourceFile("b.py", TOP3 + short)], DetectorConfig()
    )
    assert sorted((p.a.name, p.trivial) for p in report.pairs) == [("n", True), ("top3", False)]
    (clone_class,) = report.classes
    assert [f.name for f in clone_class.fragments] == ["top3", "top3"]


def test_negative_min_tokens_is_a_config_error():
    with pytest.raises(ConfigError):
        DetectorConfig(min_tokens=-1)


def test_empty_size_window_is_a_config_error():
    with pytest.raises(ConfigError):
        DetectorConfig(min_lines=10, max_lines=9)


# --- Robustness ---------------------------------------------------------------------------------

CANONICAL = """\
def count_vowels(text):
    total = 0
    for ch in text.lower():
        if ch in "aeiou":
            total += 1
    return total
"""


def test_truncated_function_is_still_compared_and_marked_with_errors():
    truncated = (
        "def count_vowels(text):\n"
        "    total = 0\n"
        "    for ch in text.lower():\n"
        '        if ch in "aeiou":\n'
        "            total += 1\n"
        "    return total +\n"
    )
    report = run(CANONICAL, truncated)
    assert [(p.clone_type.name, p.b.has_errors, p.a.has_errors) for p in report.pairs] == [
        ("3", True, False)
    ]
    assert report.pairs[0].similarity == 95  # 22 of 23 tokens (95.7%, rounded down)
    assert (report.system_a.with_errors, report.system_b.with_errors) == (0, 1)
    assert report.to_dict()["pairs"][0]["b"]["has_errors"] is True


def test_function_truncated_in_its_first_statement_is_still_compared():
    canonical = "def f(a, b):\n    return g(a, b, a + b, a * b, a - b, 1, 2)\n"  # 23 tokens
    truncated = "def f(a, b):\n    return g(a, b, a + b, a * b, a - b, 1,\n"  # 21 in the LCS
    report = run(canonical, truncated)
    assert [(p.clone_type.name, p.b.has_errors) for p in report.pairs] == [("3", True)]


def test_tab_indentation_is_type_1():
    tabs = CANONICAL.replace("    ", "\t")
    assert "\t\t\t" in tabs
    assert summary(run(CANONICAL, tabs)) == [("1", 100, False)]


def test_crlf_and_cr_line_endings_on_disk_are_type_1(tmp_path):
    (tmp_path / "lf.py").write_bytes(CANONICAL.encode())
    (tmp_path / "crlf.py").write_bytes(CANONICAL.replace("\n", "\r\n").encode())
    (tmp_path / "cr.py").write_bytes(CANONICAL.replace("\n", "\r").encode())
    for name in ("crlf.py", "cr.py"):
        report = find_clones(tmp_path / "lf.py", tmp_path / name)
        assert summary(report) == [("1", 100, False)], name
        assert report.pairs[0].b.end_line == 6


def test_invalid_utf8_bytes_on_disk_are_replaced_not_fatal(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "canonical.py").write_bytes(CANONICAL.encode())
    damaged = CANONICAL.encode().replace(b'"aeiou"', b'"ae\xff\xfeiou"')
    (tmp_path / "b" / "sample.py").write_bytes(b"\xef\xbb\xbf" + damaged + b"# \xc3\n")
    report = find_clones(tmp_path / "a", tmp_path / "b")
    # The damaged string literal differs (Type-1 fails), blind renaming hides it.
    assert summary(report) == [("2", 100, False)]
    assert report.pairs[0].b.file == "sample.py"
    assert not report.pairs[0].b.has_errors


def test_empty_file_gives_no_fragments_and_no_error(tmp_path):
    report = run("", CANONICAL)
    assert report.pairs == ()
    assert (report.system_a.files, report.system_a.fragments) == (1, 0)
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "full.py").write_text(CANONICAL)
    report = find_clones(tmp_path / "empty.py", tmp_path / "full.py")
    assert report.pairs == ()
    assert (report.system_a.fragments, report.system_b.fragments) == (0, 1)


def test_file_without_functions_gives_no_fragments():
    report = run("x = 1\nprint(x)\n", CANONICAL)
    assert (report.system_a.fragments, report.pairs) == (0, ())


def big_function(lines: int) -> str:
    return "def big(a):\n" + "".join(f"    a = a + {i}\n" for i in range(lines - 1))


def test_function_beyond_max_lines_is_dropped():
    huge = big_function(2501)
    report = run(huge, huge)
    assert report.pairs == ()
    assert (report.system_a.fragments, report.system_a.compared) == (1, 0)


def test_function_of_exactly_max_lines_is_kept():
    largest = big_function(2500)
    report = run(largest, largest)
    assert [(p.clone_type.name, p.a.size) for p in report.pairs] == [("1", 2500)]


def test_max_lines_override_applies_to_the_default_profile():
    source = big_function(30)
    assert run(source, source, DetectorConfig(max_lines=30)).pairs != ()
    assert run(source, source, DetectorConfig(max_lines=29)).pairs == ()
