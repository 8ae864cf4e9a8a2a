"""AnalyzeFunction: analyse the latest (or the given) run and store recommendations with history."""

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rightsizer import bootstrap
from rightsizer.adapters.aws.session import AwsSession
from rightsizer.handlers.payload import event_payload
from rightsizer.settings import Settings

logger, metrics, tracer = Logger(), Metrics(), Tracer()


@logger.inject_lambda_context(correlation_id_path="run")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    analysis = bootstrap.analyze_payload(AwsSession(), Settings.from_env(), event_payload(event), datetime.now(UTC))
    metrics.add_metric(name="InstancesAnalyzed", unit=MetricUnit.Count, value=len(analysis.recommendations))
    metrics.add_metric(name="PotentialSavingsUSD", unit=MetricUnit.NoUnit, value=float(analysis.potential_savings))
    for finding, count in analysis.findings.items():
        metrics.add_metric(name=f"Findings.{finding}", unit=MetricUnit.Count, value=count)
    logger.info("analysed", extra=analysis.summary())
    return analysis.summary()
