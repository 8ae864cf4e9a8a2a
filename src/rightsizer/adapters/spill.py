"""The `AdviceStore` of a live analysis (the CLI's `analyze --output json`): recommendations in a temporary file.

A region of 10,000 GPU hosts makes 10,000 recommendations of a few kilobytes each, and the report is written only once
they are all made and ranked. Each recommendation (and the summary consolidation still reads, where it does) is pickled
to the end of an unnamed temporary file as it is put; memory keeps one small entry per recommendation: its ranking key,
its order and where its bytes are. `ranked()` reads them back one at a time in the report's order. Putting one again
(a step across hosts rewrote it) appends the new bytes and points the entry at them. The file goes when the store is
closed, or with the process. Pickle is safe here: the file is this process's own, unnamed, and read only by it.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from types import TracebackType
from typing import IO

from rightsizer.domain.models.advice import Recommendation
from rightsizer.domain.models.usage import UsageSummary
from rightsizer.services.report import savings_key

Key = tuple[str, str, str]  # account, region, resource id


@dataclass(frozen=True, slots=True)
class _Entry:
    rank: tuple[int, Decimal, Decimal, str]  # services/report.py's savings_key
    order: int
    offset: int
    size: int


class SpilledAdvice:
    """An `AdviceStore` (services/ports.py) in an unnamed temporary file, with an index in memory."""

    def __init__(self) -> None:
        # The store owns the file for its life: closed by close() (its with block), or with the process.
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="rightsizer-advice-")  # noqa: SIM115
        self._end = 0
        self._index: dict[Key, _Entry] = {}

    def put(self, rec: Recommendation, summary: UsageSummary | None = None, *, order: int | None = None) -> None:
        key = (rec.account_id, rec.region, rec.instance_id)
        data = pickle.dumps((rec, summary), protocol=pickle.HIGHEST_PROTOCOL)
        self._file.seek(self._end)
        self._file.write(data)
        before = self._index.get(key)
        if order is None:
            order = before.order if before is not None else len(self._index)
        self._index[key] = _Entry(savings_key(rec), order, self._end, len(data))
        self._end += len(data)

    def taken(self, account_id: str, region: str, resource_id: str) -> tuple[Recommendation, UsageSummary | None]:
        return self._read(self._index[(account_id, region, resource_id)])

    def ranked(self) -> Iterator[Recommendation]:
        for entry in sorted(self._index.values(), key=lambda entry: (entry.rank, entry.order)):
            yield self._read(entry)[0]

    def __len__(self) -> int:
        return len(self._index)

    def _read(self, entry: _Entry) -> tuple[Recommendation, UsageSummary | None]:
        self._file.seek(entry.offset)
        rec, summary = pickle.loads(self._file.read(entry.size))
        return rec, summary

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SpilledAdvice:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
