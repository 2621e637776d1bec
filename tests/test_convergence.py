"""The same-task convergence null: a task is memorized only where an independent solver would
not write the same code. Real HumanEval tasks, the shipped panel figures, --panel files, other
models of the store and the real CLI (`cloneprobe detect FILE --json`)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.cli import main
from cloneprobe.evidence.panel.convergence import (
    ConvergenceRule,
    benjamini_hochberg,
    binomial_tail,
    decide,
    task_null,
)
from cloneprobe.evidence.panel.families import family_of, infer_family
from cloneprobe.evidence.panel.figures import SOURCES_FILE, Solver, shipped_panel
from cloneprobe.evidence.verdict import MEMORIZED, SUSPECTED, task_verdict

HUMANEVAL = load_humaneval()


def canonical(number: int) -> str:
    return HUMANEVAL.get(f"HumanEval/{number}").canonical_solution


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def detect(tmp_path: Path, records: list[dict], *extra: str, model: str = "m") -> dict:
    tmp_path.mkdir(exist_ok=True)
    path = write(tmp_path / f"samples-{model}.jsonl", records)
    result = CliRunner().invoke(main, [
        "detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", model,
        "--temperature", "0.2", "--json", *extra], env={"OPENAI_API_KEY": None})  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def copies(*numbers: int, n: int = 2) -> list[dict]:
    return [{"task_id": f"HumanEval/{i}", "completion": canonical(i)}
            for i in numbers for _ in range(n)]  # fmt: skip


def group_of(report: dict, model: str = "m") -> dict:
    return next(g for g in report["groups"] if g["model"] == model)


def test_shipped_panel_is_figures_with_sources_and_no_sample_text():
    panel = shipped_panel()
    assert panel.stale is None
    assert len(panel.families()) >= 3
    sources = json.loads(SOURCES_FILE.read_text())["sources"]
    for source in sources:
        assert {"repository", "path", "commit", "licence", "model", "family"} <= set(source)
        assert len(source["commit"]) == 40
    shipped = {s["id"] for s in sources if s["role"] == "panel"}
    assert set(panel.models) == shipped
    held_out = {s["family"] for s in sources if s["role"] == "held_out"}
    assert held_out and not held_out & panel.families()  # the held-out check is unrelated
    figure = panel.figures["tasks"]["HumanEval/40"]["gpt-4"]
    assert set(figure) == {"n", "answered", "best", "closeness"}
    assert all(isinstance(v, float) for pair in figure["closeness"] for v in pair)


def test_textbook_triple_loop_is_convergent_and_a_rare_copy_memorized(tmp_path):
    # HumanEval/40's triple loop is written verbatim by unrelated panel families; /20's
    # canonical (closest_pair, new_distance, the redundant sorts) by none.
    report = detect(tmp_path, copies(40, 20))
    group = group_of(report)
    assert group["tasks_with_evidence"] == 2  # both copies are candidate evidence
    forty, twenty = group["convergence"]["HumanEval/40"], group["convergence"]["HumanEval/20"]
    assert forty["convergent"] and not forty["memorized"]
    assert len(forty["families_reaching"]) >= 2
    assert "convergent" in forty["figure"]
    assert twenty["memorized"] and twenty["families_reaching"] == []
    assert twenty["figure"].startswith(f"0 of {twenty['families']} independent families")
    assert "Benjamini-Hochberg" in twenty["figure"]
    assert twenty["closest"] and all(c["origin"] == "panel" for c in twenty["closest"])
    assert group["tasks_memorized"] == 1


def test_a_panel_file_of_another_family_takes_the_claim_away_but_not_one_of_its_own(tmp_path):
    # The shipped panel never writes /20's canonical; a --panel file whose model writes it does.
    panel = write(tmp_path / "other.jsonl", [
        {"task_id": "HumanEval/20", "completion": canonical(20), "model": "deepseek-coder-6.7b",
         "temperature": 0.2}])  # fmt: skip
    other = group_of(detect(tmp_path / "a", copies(20), "--panel", str(panel)))
    assert other["convergence"]["HumanEval/20"]["families_reaching"] == ["deepseek"]
    assert not other["convergence"]["HumanEval/20"]["memorized"]
    # the user says the panel file's model is of the audited model's family: no vouching
    same_family = ("--family", "deepseek-coder-6.7b=mine", "--family", "m=mine")
    own = group_of(detect(tmp_path / "b", copies(20), "--panel", str(panel), *same_family))
    assert own["convergence"]["HumanEval/20"]["memorized"]


def test_other_models_in_the_store_vouch_only_across_families(tmp_path):
    store = str(tmp_path / "s.sqlite")

    def run(*args: str) -> dict:
        result = CliRunner().invoke(main, ["detect", *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    for model in ("codellama-13b", "qwen2-7b"):
        path = write(tmp_path / f"{model}.jsonl", copies(20))
        run(str(path), "--store", store, "--model", model, "--temperature", "0.2")
    report = run(store)  # the whole store: both models
    qwen = group_of(report, "qwen2-7b")["convergence"]["HumanEval/20"]
    assert "meta-llama" in qwen["families_reaching"] and not qwen["memorized"]
    assert any(c["origin"] == "store" for c in qwen["closest"])


def test_families_by_name_and_by_the_user():
    assert infer_family("gpt-3.5-turbo-0613") == infer_family("gpt-4") == "openai-gpt"
    assert infer_family("codellama/CodeLlama-34b-Instruct-hf") == "meta-llama"
    assert infer_family("Salesforce/codegen-2B-mono") == "salesforce-codegen"
    assert infer_family("my-model") == "model:my-model"
    assert infer_family("embedded") == "huggingface-smollm"  # the embedded SmolLM2
    assert family_of("my-model", {"my-model": "meta-llama"}) == "meta-llama"


def test_benjamini_hochberg_and_the_binomial_tail():
    q = benjamini_hochberg({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.5})
    assert q == {"a": 0.04, "c": 0.053333, "b": 0.053333, "d": 0.5}
    assert binomial_tail(2, 2, 0.1) == 0.1 * 0.1
    assert binomial_tail(0, 5, 0.3) == 1.0


def test_the_figure_calls_a_task_convergent_only_when_the_rule_does():
    # two families must reach the evidence; one does: not convergent, and the line says so
    rule = ConvergenceRule(convergent_families=2, min_families=1)
    solvers = [Solver("x", "fa", "panel", 1, ((1.0, 1.0),)),
               Solver("y", "fb", "panel", 1, ((0.1, 0.1),))]  # fmt: skip
    null = decide({"T": task_null("T", (1.0, 1.0), "own", solvers, 1, 1, rule)}, rule)["T"]
    assert null["families_reaching"] and not null["convergent"]
    assert "convergent" not in null["figure"]


def test_verdict_rests_on_the_convergence_figure():
    base = {"figure": "0 of 3 independent families reach this", "missing": False}
    memorized = task_verdict("evidence", True, {}, convergence={**base, "memorized": True})
    assert memorized.verdict == MEMORIZED
    assert any("0 of 3 independent families" in r for r in memorized.reasons)
    convergent = task_verdict("evidence", True, {}, convergence={
        **base, "memorized": False, "figure": "2 of 3 ...: convergent"})  # fmt: skip
    assert convergent.verdict != MEMORIZED
    unmeasured = {"memorized": False, "missing": True, "figure": "convergence not measured"}
    missing = task_verdict("evidence", True, {}, convergence=unmeasured)
    assert missing.verdict == SUSPECTED
    assert any("not measured" in r for r in missing.reasons)


def test_a_benchmark_without_a_panel_says_convergence_is_missing(tmp_path):
    benchmark = write(tmp_path / "bench.jsonl", [
        {"task_id": "T/20", "prompt": HUMANEVAL.get("HumanEval/20").prompt,
         "entry_point": "find_closest_elements", "canonical_solution": canonical(20)}])  # fmt: skip
    report = detect(tmp_path, [{"task_id": "T/20", "completion": canonical(20)}],
                    "--benchmark", str(benchmark))  # fmt: skip
    group = group_of(report)
    assert group["tasks_convergence_missing"] == ["T/20"]
    null = group["convergence"]["T/20"]
    assert null["missing"] and not null["memorized"]
    assert "not measured" in null["figure"]


def test_two_families_are_too_few_to_call_a_copy_rare(tmp_path):
    # a model of a panel family (openai-gpt) leaves two independent families in the shipped
    # panel: "0 of 2" is no rarity, so the verdict says what is missing
    group = group_of(detect(tmp_path, copies(20), model="gpt-4o"), "gpt-4o")
    null = group["convergence"]["HumanEval/20"]
    assert null["thin"] and null["missing"] and not null["memorized"]
    assert null["families"] == 2
    assert "only 2 independent families" in null["figure"]
    assert group["tasks_convergence_missing"] == ["HumanEval/20"]


def test_terminal_and_html_show_the_figure_and_the_closest_independent_solutions(tmp_path):
    path = write(tmp_path / "samples.jsonl", copies(20, 40))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [
        "detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "m",
        "--temperature", "0.2", "--evidence", "--report", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "memorized (rare under convergence)" in text
    assert "HumanEval/20: MEMORIZED: 0 of 3 independent families" in text
    assert "HumanEval/40: convergent" in text
    assert "closest independent: codegen-2b-mono (salesforce-codegen, panel)" in text
    assert "same-task convergence: 0 of 3 independent families" in text  # beside the pair
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "closest independent:" in html and "Benjamini-Hochberg" in html


def test_the_summary_without_signals_judges_with_the_convergence_null(tmp_path):
    # no signals were computed: the report's verdicts come from the clone evidence alone, and
    # still a convergent copy (/40's triple loop) is not memorized, a rare one (/20) is
    from cloneprobe.audit.audit_report import report_from_dict
    from cloneprobe.audit.verdict_summary import task_entries

    report = report_from_dict(detect(tmp_path, copies(40, 20)))
    verdicts = {e["task_id"]: e["verdict"] for e in task_entries(report)}
    assert verdicts["HumanEval/20"] == MEMORIZED
    assert verdicts["HumanEval/40"] != MEMORIZED


def test_the_rule_in_the_detection_settings_is_the_one_that_judges(tmp_path):
    # calibrate.margin_sweep judges a store under other rules through DetectionSettings
    from cloneprobe.audit.detection import DetectionSettings
    from cloneprobe.clones import DetectorConfig
    from cloneprobe.pipeline import SilentReporter, report_on_source
    from cloneprobe.settings import SampleSource

    path = write(tmp_path / "s.jsonl", copies(20))
    for name, rule, memorized in (("default", ConvergenceRule(), True),
                                  ("no-fdr", ConvergenceRule(alpha=0.0), False)):  # fmt: skip
        source = SampleSource(store=tmp_path / f"{name}.sqlite", files=(path,), model="m",
                              temperature=0.2)  # fmt: skip
        report = report_on_source(source, DetectionSettings(DetectorConfig(), convergence=rule),
                                  SilentReporter())  # fmt: skip
        null = next(g for g in report.groups if g["model"] == "m")["convergence"]["HumanEval/20"]
        assert null["memorized"] is memorized, name
        assert report.evidence_rule["convergence"]["alpha"] == rule.alpha


def test_the_blind_reading_join_counts_the_verdicts_the_reader_accepts(tmp_path, capsys):
    import pytest

    from cloneprobe.evidence.calibrate import blind_reading

    key = tmp_path / "key.json"
    key.write_text(json.dumps([
        {"pair": 0, "model": "a", "origin": "control (heavy)", "task_id": "HumanEval/5",
         "memorized": True},
        {"pair": 1, "model": "a", "origin": "control (heavy)", "task_id": "HumanEval/12",
         "memorized": True},
        {"pair": 2, "model": "b", "origin": "published (panel)", "task_id": "HumanEval/40",
         "memorized": False}]))  # fmt: skip
    judged = write(tmp_path / "judged.jsonl", [{"pair": 0, "memorized": True},
                                               {"pair": 1, "memorized": False},
                                               {"pair": 2, "memorized": True}])  # fmt: skip
    assert blind_reading.main(["join", str(key), str(judged)]) == 0
    out = capsys.readouterr().out
    assert "control (heavy): 2 pairs; the tool's memorized verdicts 2, accepted by the reader " \
           "1 (50%)" in out
    assert "published (panel): 1 pairs; the tool's memorized verdicts 0, accepted by the " \
           "reader 0; called memorized by the reader only: 1 (HumanEval/40)" in out
    write(judged, [{"pair": 0, "memorized": True}])
    with pytest.raises(SystemExit, match=r"pairs \[1, 2\] are not judged"):
        blind_reading.main(["join", str(key), str(judged)])


def test_a_convergent_copy_is_never_shown_as_evidence_of_memorization(tmp_path):
    # HumanEval/40's triple loop: candidate evidence by its tier, convergent by the null. No
    # heading, pair or count may call it evidence of memorization (it was shown in red under
    # "Evidence of memorization" beside "3 of 3 independent families reach this").
    out = tmp_path / "out"
    path = write(tmp_path / "s.jsonl", copies(40))
    result = CliRunner().invoke(main, [
        "detect", str(path), "--store", str(tmp_path / "s.sqlite"), "--model", "m",
        "--temperature", "0.2", "--evidence", "--report", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    markdown = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    for text in (result.output, markdown):
        assert "candidate evidence, convergent (not memorization) (strength" in text
        assert "are candidate evidence; memorized (rare under convergence): 0 task(s)" in text
        assert "evidence of memorization (strength" not in text
    assert 'class="pair tier-candidate"' in html and 'class="pair tier-evidence"' not in html
    assert "Candidate evidence that convergence explains" in html
