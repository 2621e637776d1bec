"""The shipped panel figures, loaded as package data, and the solvers they describe.

A panel is a set of independent solvers of each task, each with its family and the closeness
of every answered sample to the canonical (`Solver.closeness`: verbatim, structure). The
shipped figures (`figures.json`) are one source of solvers; the other models of a report, the
files the user names with `--panel` and the model's own disguised-prompt samples are others
(cloneprobe.evidence.panel.convergence).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

PANEL_VERSION = 1
"""Raised whenever the figures' meaning changes (old figures are then reported stale)."""
FIGURES_FILE = Path(__file__).with_name("figures.json")
SOURCES_FILE = Path(__file__).with_name("sources.json")


@dataclass(frozen=True)
class Solver:
    """One independent solver of one task: who, of which family, from where, and the
    (verbatim, structure) closeness of each of its answered samples to the canonical."""

    name: str
    family: str
    origin: str
    """`panel` (shipped figures), `store` (another model of the report), `file` (--panel),
    `disguised` (the model itself under disguised prompts)."""
    samples: int
    closeness: tuple[tuple[float, float], ...]

    @property
    def best(self) -> tuple[float, float] | None:
        return max(self.closeness, default=None)


@dataclass(frozen=True)
class ShippedPanel:
    figures: dict
    stale: str | None = None
    """Why the figures cannot be used (None: usable)."""

    @property
    def models(self) -> dict:
        return self.figures.get("models", {})

    def families(self) -> set[str]:
        return {m["family"] for m in self.models.values()}

    def solvers(self, task_id: str) -> list[Solver]:
        """The shipped panel's solvers of `task_id` (none when stale or not in the panel)."""
        if self.stale:
            return []
        found = []
        for model_id, figure in (self.figures.get("tasks", {}).get(task_id) or {}).items():
            model = self.models[model_id]
            found.append(Solver(
                name=model_id, family=model["family"], origin="panel", samples=figure["n"],
                closeness=tuple((v, s) for v, s in figure["closeness"])))  # fmt: skip
        return found


@lru_cache(maxsize=1)
def shipped_panel() -> ShippedPanel:
    """The package's panel figures; stale (and so unused) when they were derived with another
    detector or panel version than this one's."""
    from ...audit.version import DETECTOR_VERSION

    try:
        text = resources.files(__package__).joinpath("figures.json").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ShippedPanel({}, "no panel figures in the package")
    figures = json.loads(text)
    if figures.get("version") != PANEL_VERSION or figures.get("detector_version") != (
        DETECTOR_VERSION
    ):
        return ShippedPanel(figures, (
            f"panel figures built with detector version {figures.get('detector_version')}, "
            f"now {DETECTOR_VERSION}: rebuild with {figures.get('command', 'the build script')}"
        ))  # fmt: skip
    return ShippedPanel(figures)
