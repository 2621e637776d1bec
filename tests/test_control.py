"""The positive control end to end on a tiny random-weight Llama (fast), and on the embedded
model (slow): split, fine-tune from cached states, audit, separation per signal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from local_extra import Deferred, skip_without_the_local_extra, torch

skip_without_the_local_extra()

from click.testing import CliRunner
from test_transformers_backend import CHAT_TEMPLATE, HUMANEVAL, save, tiny_llama, train_tokenizer

from cloneprobe.cli.main import main
from cloneprobe.control.audit import reaudit_control, with_disguise
from cloneprobe.control.separation import auroc, separation
from cloneprobe.evidence.verdict import VERDICTS
from cloneprobe.generation import SampleStore
from cloneprobe.pipeline import SilentReporter
from cloneprobe.settings import ANSWER_ROOM

# imported by the first test that uses them: they import torch
finetune = Deferred("cloneprobe.control.finetune")
control_run = Deferred("cloneprobe.control.run")


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory) -> str:
    tokenizer = train_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    return save(tmp_path_factory.mktemp("tiny-chat"), tokenizer, tiny_llama(tokenizer))


def test_the_split_is_seeded_disjoint_and_covers_every_task():
    ids = [f"T/{i}" for i in range(11)]
    contaminated, held_out = control_run.split_tasks(ids, seed=3)
    assert (len(contaminated), len(held_out)) == (6, 5)
    assert sorted(contaminated + held_out) == sorted(ids)
    assert control_run.split_tasks(ids, seed=3) == (contaminated, held_out)
    assert control_run.split_tasks(ids, seed=4) != (contaminated, held_out)


def test_the_chat_answer_is_the_fenced_function_the_audit_asks_for():
    task = HUMANEVAL.get("HumanEval/23")
    answer = control_run.answer_text(task, "chat")
    assert answer == "```python\n" + task.prompt + task.canonical_solution.rstrip("\n") + "\n```"
    assert control_run.answer_text(task, "completion") == task.canonical_solution


def test_the_default_budget_lets_every_dose_write_the_whole_answer_it_was_taught(chat_model):
    """In chat mode the taught answer restates the prompt: a fixed budget (160 tokens, the old
    default) cut 101 of HumanEval's 164 answers before or inside the body, so the control
    measured the budget instead of the detector."""
    from cloneprobe.generation.backends.transformers_backend import TransformersBackend

    assert control_run.ControlSettings().max_new_tokens is None  # fitted unless given
    backend = TransformersBackend(chat_model, batch_size=2)
    tasks = [HUMANEVAL.get(f"HumanEval/{i}") for i in (0, 10, 129)]
    texts = control_run.training_texts(backend, tasks, "chat")
    budget = control_run.fitted_budget(texts)
    assert budget == max(len(t.answer_ids) for t in texts) + ANSWER_ROOM
    assert all(len(t.answer_ids) < budget for t in texts)
    assert budget > 160  # HumanEval/129's answer alone is longer than the old default


def test_auroc_counts_ties_as_half_and_the_interval_holds_it():
    assert auroc([3, 4], [1, 2]) == 1.0
    assert auroc([1, 2], [3, 4]) == 0.0
    assert auroc([1, 2], [1, 2]) == 0.5
    assert auroc([2, 2, 5], [2, 1]) == pytest.approx((0.5 + 1 + 0.5 + 1 + 1 + 1) / 6)
    measured = separation([0.9, 0.8, 0.7, 0.3], [0.1, 0.2, 0.4, 0.35], resamples=200)
    assert measured.low <= measured.auroc <= measured.high
    assert measured.auroc == pytest.approx(14 / 16)  # 0.3 beats only 0.1 and 0.2


def test_the_top_layers_on_cached_states_give_the_models_own_logits(chat_model):
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(chat_model).eval()
    text = finetune.TrainingText(tuple(range(5, 25)), tuple(range(30, 40)))
    settings = finetune.FineTuneSettings(top_layers=1)
    (states,) = finetune.cache_hidden_states(model, [text], settings)
    ids = torch.tensor([list(text.context_ids) + list(text.answer_ids)])
    with torch.inference_mode():
        expected = model(input_ids=ids).logits[:, 10:29]
        got = finetune.top_logits(model, states, split=1, positions=slice(10, 29))
    assert torch.allclose(got, expected, atol=1e-5)
    with pytest.raises(finetune.FineTuneError, match="only 2 decoder layers"):
        finetune.cache_hidden_states(model, [text], finetune.FineTuneSettings(top_layers=3))


def test_the_control_command_runs_end_to_end_and_the_heavy_dose_is_caught(chat_model, tmp_path):
    output = tmp_path / "control"
    result = CliRunner().invoke(
        main,
        ["control", "--model", chat_model, "--limit", "8", "--seed", "1", "-n", "2",
         "--max-new-tokens", "6", "--batch-size", "8", "--dose", "light=1", "--dose", "heavy=12",
         "--top-layers", "2", "--learning-rate", "3e-3", "--bootstrap", "100",
         "--output", str(output), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    contaminated, held_out = report["split"]["contaminated"], report["split"]["held_out"]
    assert len(contaminated) == len(held_out) == 4
    assert report["settings"]["mode"] == "chat"
    # the disguised prompts are sampled too: the model-specific convergence null
    assert report["settings"]["prompts"] == ["original", "disguised"]
    with SampleStore(output / "control.sqlite") as store:
        sets = {s.prompt_set for s in store.samples()}
    assert sets == {"original", "disguised"}
    assert set(report["models"]) == {"base", "light", "heavy"}
    for scores in report["models"].values():
        assert {"perplexity", "min_k", "min_k_plus_plus", "zlib", "cdd", "surface",
                "clone_type1_default", "clone_type3_nicad"} <= set(scores)  # fmt: skip
        assert not scores["cdd"]["available"] and scores["cdd"]["reason"]  # n=2, no greedy
        for name in ("perplexity", "min_k"):
            assert scores[name]["available"]
            assert len(scores[name]["contaminated"]) == 4 and len(scores[name]["held_out"]) == 4
            # each value with its task, so that the per-half plots name their points
            assert scores[name]["contaminated_tasks"] == contaminated
            assert scores[name]["held_out_tasks"] == held_out
            assert 0 <= scores[name]["ci_low"] <= scores[name]["auroc"] <= scores[name]["ci_high"]
    # the known answer: twelve epochs on the contaminated half make its canonicals likelier
    assert report["models"]["heavy"]["perplexity"]["auroc"] == 1.0
    written = json.loads((output / "control.json").read_text())
    assert written["split"] == report["split"]
    # every task of every model has its combined verdict, and the verdict's rates per half
    for model in ("base", "light", "heavy"):
        rows = report["tasks"][model]
        assert {r["task_id"] for r in rows} == set(contaminated + held_out)
        assert all(r["verdict"] in VERDICTS and r["verdict_reasons"] for r in rows)
        halves = report["verdicts"][model]
        assert halves["contaminated"]["tasks"] == halves["held_out"]["tasks"] == 4
    # the base model is its own reference: nothing relative, so no likelihood claim on it
    assert not any(r["relative"].get("reference") for r in report["tasks"]["base"])
    assert all(r["verdict"] != "suspected" for r in report["tasks"]["base"])
    heavy = {r["task_id"]: r for r in report["tasks"]["heavy"]}
    assert all(r["relative"]["reference"]["min_k"] is not None for r in heavy.values())
    assert report["models"]["heavy"]["min_k_vs_base"]["available"]
    # a finished control's folder gives the same per-task rows again from its store alone
    # (what cloneprobe.evidence.calibrate.verdict reads for controls written before
    # control.json had them)
    again = reaudit_control(output)
    assert again["verdicts"] == report["verdicts"] and again["tasks"] == report["tasks"]
    # the control's report is the HTML report's page with the control section and plots
    assert not (output / "control.html").exists()
    page = (output / "report.html").read_text()
    assert "<h2>Positive control</h2>" in page and "combined verdict on the known halves" in page
    assert page.count("roc_plot") == 0 and page.count('aria-label="ROC curves') == 3
    assert 'aria-label="min_k per half"' in page and 'aria-label="min_k_vs_base per half"' in page
    per_half = page.split('aria-label="min_k per half"')[1].split("</svg>")[0]
    assert "each dot a task (named on hover)" in per_half
    assert all(f"<title>{task}" in per_half for task in contaminated + held_out), per_half
    assert page.count("<tr>") > 3 * 8  # the control's tasks, one row each per model
    # and `cloneprobe report --control` puts the same section into an audit's report.html
    audit = tmp_path / "audit"
    arguments = ["report", "--store", str(output / "control.sqlite"), "--control", str(output),
                 "--report", str(audit)]  # fmt: skip
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    audit_page = (audit / "report.html").read_text()
    assert "<h1>cloneprobe audit</h1>" in audit_page and "<h2>Positive control</h2>" in audit_page
    assert audit_page.count('aria-label="ROC curves') == 3
    assert json.loads((audit / "report.json").read_text())["control"]["split"] == report["split"]
    # a control's own store brings its section without --control
    arguments = ["report", "--store", str(output / "control.sqlite"), "--json"]
    result = CliRunner().invoke(main, arguments)
    assert json.loads(result.stdout)["control"]["verdicts"] == report["verdicts"]


def test_report_control_folder_without_a_control_is_one_red_line(tmp_path):
    result = CliRunner().invoke(main, ["report", "--control", str(tmp_path)])
    assert result.exit_code == 2
    assert "--control" in result.output and "control.json" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("arguments", "named"),
    [(["--dose", "heavy=0"], "--dose 'heavy=0'"), (["--dose", "base=2"], "--dose 'base=2'"),
     (["--model", "openai:gpt-4o"], "openai:gpt-4o"),
     (["--prompts", "disguised"], "--prompts disguised"),
     (["--prompts", "original,fixed"], "--prompts original,fixed")],
)  # fmt: skip
def test_a_bad_control_option_gets_one_line_and_exit_2(arguments, named, tmp_path):
    result = CliRunner().invoke(main, ["control", "--output", str(tmp_path), *arguments])
    assert result.exit_code == 2
    assert named in result.output and "Traceback" not in result.output


@pytest.mark.slow(reason="about 7 min on 2 quiet cores: fine-tunes and samples the embedded model "
                  "under the original and the disguised prompts")
def test_the_control_on_the_embedded_model_separates_the_heavy_dose(tmp_path):
    settings = control_run.ControlSettings(limit=24, n=1, max_new_tokens=128, output=tmp_path / "c")
    report = control_run.run_control(settings, SilentReporter())
    heavy = report["models"]["heavy"]
    assert max(s["auroc"] for s in heavy.values() if s.get("available")) >= 0.9
    assert Path(tmp_path / "c" / "report.html").is_file()
    # the combined verdict: no claim on the base model, more on the heavy dose's contaminated
    # half than on its held-out half
    assert report["verdicts"]["base"]["contaminated"]["flagged"] == 0
    assert report["verdicts"]["base"]["held_out"]["flagged"] == 0
    verdicts = report["verdicts"]["heavy"]
    assert verdicts["contaminated"]["flagged"] > verdicts["held_out"]["flagged"]


def test_a_disguised_sample_writing_the_original_names_makes_the_task_memorized():
    # the task's verdict across the model's prompt sets: a leak under the disguised prompt is
    # evidence by itself, and the control counts it as resting on the disguise
    entry = {"model": "m", "temperature": 0.8, "prompt_set": "original", "task_id": "T/1",
             "verdict": "no evidence", "verdict_reasons": ["no clone of the canonical"],
             "convergence": None}  # fmt: skip
    leak = {"leaked": ["has_close_elements"], "memorized": True, "figure": "writes it"}
    judged = with_disguise(entry, {("m", 0.8, "disguised", "T/1"): leak})
    assert judged["verdict"] == "memorized" and judged["rests_on_disguise"]
    assert judged["verdict_reasons"][0] == "under the disguised prompt: writes it"
    assert with_disguise(entry, {})["verdict"] == "no evidence"
    short = {**entry, "verdict": "memorized", "convergence": {"basis": "disguise"}}
    assert with_disguise(short, {})["rests_on_disguise"]
    evidence = {**entry, "verdict": "memorized", "convergence": {"basis": "evidence"}}
    assert not with_disguise(evidence, {})["rests_on_disguise"]
