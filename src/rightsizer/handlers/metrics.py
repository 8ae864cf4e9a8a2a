"""Counts with a dimension of their own (findings by type, resize outcomes) for the stack's dashboard."""

from __future__ import annotations

from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled


def count_by(name: str, dimension: str, value: str, count: float = 1) -> None:
    """One metric datapoint as an EMF log line (no API call). Powertools' single_metric, unlike its Metrics
    class, ignores POWERTOOLS_METRICS_DISABLED; the demo and tests set it, so it is checked here."""
    if is_metrics_disabled():
        return
    with single_metric(name=name, unit=MetricUnit.Count, value=count) as metric:
        metric.add_dimension(name=dimension, value=value)
