"""Which stored samples a command works on: a filter over the store, streamed (never a list of
every sample in memory) and counted without reading the samples' texts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from cloneprobe.generation import SampleStore, StoredSample


@dataclass(frozen=True)
class SampleSelection:
    """Stored samples without errors, filtered (empty or None: no filter)."""

    store: SampleStore
    models: tuple[str, ...] = ()
    prompt_sets: tuple[str, ...] = ()
    temperatures: tuple[float, ...] = ()
    settings_keys: tuple[str, ...] = ()
    task_ids: frozenset[str] | None = None

    def keeps(self, sample: StoredSample) -> bool:
        return (
            (not self.temperatures or sample.temperature in self.temperatures)
            and (not self.settings_keys or sample.settings_key in self.settings_keys)
            and (self.task_ids is None or sample.task_id in self.task_ids)
        )

    def _stream(self, light: bool) -> Iterator[StoredSample]:
        rows = self.store.samples(list(self.models) or None, list(self.prompt_sets) or None,
                                  light=light)  # fmt: skip
        return (sample for sample in rows if self.keeps(sample))

    def __iter__(self) -> Iterator[StoredSample]:
        return self._stream(light=False)

    def count(self) -> int:
        return sum(1 for _ in self._stream(light=True))
