"""The expert fleet (tests/expert_fleet.py) through the analyzer: per archetype, the finding a GPU expert expects and
the one the analyzer gives, with its target, money, action and confidence. Measured, not asserted:
tests/unit/test_expert_fleet.py asserts (and lists the known disagreements as strict xfails)."""

from __future__ import annotations

import time
from decimal import Decimal

from tests.expert_fleet import ARCHETYPES, advise, violations

COLUMNS = ("archetype", "type", "expected", "got", "target", "cost/mo", "saves/mo", "action", "conf", "")


def _money(amount: Decimal | None) -> str:
    return "-" if amount is None else f"${amount:,.0f}"


def run() -> None:
    started = time.perf_counter()
    rows = []
    failed = []
    saved = paid = Decimal(0)
    for archetype in ARCHETYPES:
        rec = advise(archetype)
        problems = violations(archetype, rec)
        if problems:
            failed.append((archetype.name, problems))
        amount = rec.monthly_savings or Decimal(0)
        if amount > 0:
            saved += amount
        else:
            paid -= amount
        rows.append(
            (
                archetype.name,
                archetype.instance_type,
                archetype.expected,
                rec.finding.value,
                rec.target_type or "-",
                _money(rec.monthly_cost),
                _money(rec.monthly_savings),
                rec.action.value if rec.action else "-",
                rec.confidence.value,
                "FAIL" if problems else "ok",
            )
        )
    elapsed = time.perf_counter() - started
    widths = [max(len(str(row[i])) for row in (COLUMNS, *rows)) for i in range(len(COLUMNS))]
    print(f"Expert fleet: {len(ARCHETYPES)} archetypes, the expert's finding against the analyzer's")
    for row in (COLUMNS, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    agreed = len(ARCHETYPES) - len(failed)
    print(
        f"{agreed} of {len(ARCHETYPES)} as the expert expects; savings shown ${saved:,.2f}/month, paid changes "
        f"${paid:,.2f}/month; {elapsed:.1f} s"
    )
    for name, problems in failed:
        print(f"  FAIL {name}: {'; '.join(problems)}")
