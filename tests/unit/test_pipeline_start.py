"""The day's pipeline start (services/pipeline.start_run): plan once, record the run, start one execution a day."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from rightsizer.services.pipeline import Mode, RunStart, StartStatus, Target, plan_key, start_run

NOW = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)
TARGETS = [Target("111122223333", "us-east-1", ""), Target("444455556666", "us-east-1", "arn:aws:iam::4:role/r")]


class Runs:
    def __init__(self, latest: str | None = None) -> None:
        self.recorded: list[tuple[str, datetime]] = []
        self._latest = latest

    def put_run(self, run: str, now: datetime) -> None:
        self.recorded.append((run, now))

    def latest_run(self) -> str | None:
        return self._latest


class Plans:
    bucket = "plan-bucket"

    def __init__(self) -> None:
        self.written: dict[str, list[Target]] = {}

    def put_targets(self, key: str, targets: Sequence[Target]) -> None:
        self.written[key] = list(targets)


class Executions:
    def __init__(self, *existing: str) -> None:
        self.names = set(existing)
        self.inputs: list[Mapping[str, Any]] = []

    def start(self, name: str, execution_input: Mapping[str, Any]) -> str | None:
        if name in self.names:
            return None
        self.names.add(name)
        self.inputs.append(execution_input)
        return f"arn:aws:states:us-east-1:111122223333:execution:pipeline:{name}"


def test_a_collect_plans_writes_the_targets_records_the_run_and_starts_the_days_execution() -> None:
    runs, plans, executions = Runs(), Plans(), Executions()

    started = start_run(Mode.COLLECT, NOW, runs, plans, executions, lambda: TARGETS)

    assert started == RunStart(
        StartStatus.STARTED,
        Mode.COLLECT,
        run="2026-12-05",
        targets=2,
        execution_arn="arn:aws:states:us-east-1:111122223333:execution:pipeline:run-2026-12-05",
    )
    assert plans.written == {plan_key("2026-12-05"): TARGETS}
    assert runs.recorded == [("2026-12-05", NOW)]
    assert executions.inputs == [
        {"run": "2026-12-05", "mode": "collect", "plan": {"Bucket": "plan-bucket", "Key": plan_key("2026-12-05")}}
    ]


def test_a_second_start_the_same_day_is_told_it_already_started_and_starts_nothing() -> None:
    executions = Executions("run-2026-12-05")

    started = start_run(Mode.COLLECT, NOW, Runs(), Plans(), executions, lambda: TARGETS)

    assert started == RunStart(StartStatus.ALREADY_STARTED, Mode.COLLECT, run="2026-12-05", targets=2)
    assert executions.inputs == []


def test_a_catch_up_analysis_runs_over_the_latest_run_without_planning() -> None:
    plans, executions = Plans(), Executions()

    def never() -> list[Target]:
        raise AssertionError("an analysis plans nothing")

    started = start_run(Mode.ANALYZE, NOW, Runs(latest="2026-12-04"), plans, executions, never)

    assert started == RunStart(
        StartStatus.STARTED,
        Mode.ANALYZE,
        run="2026-12-04",
        targets=0,
        execution_arn="arn:aws:states:us-east-1:111122223333:execution:pipeline:analyze-2026-12-04-20261205T0600",
    )
    assert plans.written == {}


def test_a_catch_up_analysis_without_any_run_starts_nothing() -> None:
    executions = Executions()

    started = start_run(Mode.ANALYZE, NOW, Runs(), Plans(), executions, lambda: TARGETS)

    assert started == RunStart(StartStatus.NOTHING_TO_ANALYSE, Mode.ANALYZE)
    assert executions.inputs == []


def test_the_lambdas_answer_keeps_its_keys_in_order() -> None:
    # What the collect and analyze functions answer, as the Lambda runtime serialises it: the same bytes as ever.
    arn = "arn:aws:states:us-east-1:111122223333:execution:pipeline:run-2026-12-05"
    started = start_run(Mode.COLLECT, NOW, Runs(), Plans(), Executions(), lambda: TARGETS)
    again = start_run(Mode.COLLECT, NOW, Runs(), Plans(), Executions("run-2026-12-05"), lambda: TARGETS)
    nothing = start_run(Mode.ANALYZE, NOW, Runs(), Plans(), Executions(), lambda: TARGETS)

    assert json.dumps(started.summary()) == (
        f'{{"run": "2026-12-05", "mode": "collect", "status": "started", "targets": 2, "execution_arn": "{arn}"}}'
    )
    assert (
        json.dumps(again.summary())
        == '{"run": "2026-12-05", "mode": "collect", "status": "already-started", "targets": 2}'
    )
    assert json.dumps(nothing.summary()) == '{"run": "", "status": "nothing-to-analyse"}'
