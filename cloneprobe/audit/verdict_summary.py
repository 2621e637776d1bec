"""What a report says per task and per model, for the reader who wants the answer first: each
task's verdict (the report's `tasks` when signals were computed; else decided from the clone
evidence alone, by the same rule), the verdicts counted per group, and the strongest cases
with the clone pair that shows each.

Nothing here is written to report.json: it is read off the report (`AuditReport`), so every
renderer gives the same counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from cloneprobe.audit.audit_report import AuditReport, EvidencePair, TaskEntry
from cloneprobe.audit.signal_table import clone_evidence, pass_at_1, task_convergence
from cloneprobe.benchmarks.selection import task_order
from cloneprobe.evidence.verdict import MEMORIZED, SUSPECTED, VERDICTS, task_verdict


def task_entries(report: AuditReport) -> list[TaskEntry]:
    """One entry per model x temperature x prompt set x task with its verdict: the report's
    `tasks`, or, when no signal was computed, entries from the clone evidence alone (no
    signals, no relative views: the likelihood decides nothing, and the reasons say so)."""
    if report.tasks:
        return list(report.tasks)
    uninformative = {u["task_id"] for u in report.uninformative_tasks or []}
    convergence = task_convergence(report)
    entries: list[TaskEntry] = []
    for key, clones in clone_evidence(report).items():
        model, temperature, label, task_id = key
        informative = task_id not in uninformative
        verdict = task_verdict(clones.get("tier"), informative, {},
                               clone_reasons=tuple(clones.get("reasons") or ()),
                               convergence=convergence.get(key))  # fmt: skip
        entries.append({
            "model": model, "settings_key": "", "temperature": temperature, "prompt_set": label,
            "task_id": task_id, "mode": "", "samples": clones["samples"], "clones": clones,
            "informative": informative,
            "pass@1": pass_at_1(clones),
            "signals": {}, "relative": {}, "verdict": verdict.verdict,
            "verdict_reasons": list(verdict.reasons),
        })  # fmt: skip
    return entries


@dataclass(frozen=True)
class GroupVerdicts:
    """The verdicts of one model x temperature x prompt set."""

    model: str
    temperature: float
    prompt_set: str
    counts: dict[str, int]
    """Tasks per verdict, every verdict present (0 when none)."""
    memorized: tuple[str, ...]
    """The memorized tasks, strongest first (equals by task number)."""

    @property
    def tasks(self) -> int:
        return sum(self.counts.values())


def group_verdicts(entries: list[TaskEntry]) -> list[GroupVerdicts]:
    """Per model x temperature x prompt set (original prompts first): the verdict counts."""
    counts: dict[tuple, Counter] = {}
    flagged: dict[tuple, list[tuple[float, str]]] = {}
    for entry in entries:
        key = (entry["model"], entry["temperature"], entry["prompt_set"])
        counts.setdefault(key, Counter())[entry["verdict"]] += 1
        if entry["verdict"] == MEMORIZED:
            strength = (entry.get("clones") or {}).get("strength") or 0.0
            flagged.setdefault(key, []).append((-strength, task_order(entry["task_id"]),
                                                entry["task_id"]))
    ordered = sorted(counts.items(), key=lambda item: (item[0][0], item[0][1],
                                                       item[0][2] != "original", item[0][2]))
    return [
        GroupVerdicts(model, temperature, prompt_set, {v: c[v] for v in VERDICTS},
                      tuple(t for *_, t in sorted(flagged.get((model, temperature, prompt_set),
                                                               []))))
        for (model, temperature, prompt_set), c in ordered
    ]  # fmt: skip


@dataclass(frozen=True)
class Case:
    """A memorized (or suspected) task and the index of its strongest clone pair among the
    report's `evidence` (None: no pair shown)."""

    entry: TaskEntry
    pair: int | None
    strength: float


def strongest_cases(report: AuditReport, entries: list[TaskEntry], limit: int = 5) -> list[Case]:
    """The memorized tasks with the strongest clone evidence, then the suspected ones."""
    best: dict[tuple, tuple[tuple[bool, float], int]] = {}
    for index, pair in enumerate(report.evidence):
        key = pair_key(pair)
        # the strongest evidence pair first; a memorized task without one (an exact copy of a
        # short canonical, resting on the disguise) shows its strongest pair
        rank = (pair.get("tier") == "evidence", pair.get("strength") or 0.0)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, index)
    cases = []
    for entry in entries:
        if entry["verdict"] not in (MEMORIZED, SUSPECTED):
            continue
        key = (entry["model"], entry["temperature"], entry["prompt_set"], entry["task_id"])
        found = best.get(key)
        if found is None or not (found[0][0] or entry["verdict"] == MEMORIZED):
            cases.append(Case(entry, None, 0.0))
        else:
            (_, strength), index = found
            cases.append(Case(entry, index, strength))
    cases.sort(key=lambda c: (c.entry["verdict"] != MEMORIZED, -c.strength))
    return cases[:limit]


def pair_key(pair: EvidencePair) -> tuple:
    return (pair["model"], pair["temperature"], pair["prompt_set"], pair["task_id"])


@dataclass(frozen=True)
class PairCounts:
    """Clone pairs and the distinct tasks they fall in: all, those that are candidate evidence
    (the pair's tier), and the tasks memorized (candidate evidence the same-task convergence
    null makes rare)."""

    pairs: int
    tasks: int
    evidence_pairs: int
    evidence_tasks: int
    memorized_tasks: int = 0


def pair_counts(report: AuditReport) -> PairCounts:
    """Counted over every pair (the evidence file), not only those shown; tasks are distinct
    task ids (a task cloned by two models or under two prompt sets counts once)."""
    tasks, evidence_tasks, evidence_pairs, pairs = set(), set(), 0, 0
    for pair in report.every_pair():
        pairs += 1
        tasks.add(pair["task_id"])
        if pair.get("tier") == "evidence":
            evidence_pairs += 1
            evidence_tasks.add(pair["task_id"])
    memorized = {task_id for g in report.groups
                 for task_id, null in (g.get("convergence") or {}).items() if null["memorized"]}
    return PairCounts(pairs, len(tasks), evidence_pairs, len(evidence_tasks), len(memorized))



def pair_null(report: AuditReport, pair: Mapping) -> dict | None:
    """The same-task convergence null of the pair's task in the pair's group (None without)."""
    key = (pair["model"], pair["temperature"], pair["prompt_set"])
    for g in report.groups:
        if (g["model"], g["temperature"], g["prompt_set"]) == key:
            return (g.get("convergence") or {}).get(pair["task_id"])
    return None


def pair_standing(report: AuditReport, pair: Mapping) -> str | None:
    """For a pair of the `evidence` tier: memorized, convergent, not rare or unmeasured, from
    its task's convergence null in its group (None for other pairs, or a report without the
    null)."""
    null = pair_null(report, pair) if pair.get("tier") == "evidence" else None
    if not null:
        return None
    if null["memorized"]:
        return "memorized"
    if null["convergent"]:
        return "convergent"
    return "unmeasured" if null["missing"] else "not rare"
