"""AnalyzeFunction: in the pipeline, rank the run ({"action": "rank"}) or re-analyse one shard (the catch-up's
Map items); on its schedule, start the catch-up analysis of the latest run."""

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rightsizer.bootstrap import lambda_wiring
from rightsizer.bootstrap.pipeline import analyze_payload
from rightsizer.handlers.payload import event_payload

logger, metrics, tracer = Logger(), Metrics(), Tracer()


@logger.inject_lambda_context(correlation_id_path="run")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload = event_payload(event)
    result = analyze_payload(lambda_wiring(), payload, datetime.now(UTC))
    if payload.get("action") == "rank":
        metrics.add_metric(name="InstancesAnalyzed", unit=MetricUnit.Count, value=result["instances"])
        metrics.add_metric(name="PotentialSavingsUSD", unit=MetricUnit.NoUnit, value=result["potential_savings_usd"])
        for finding, count in result["findings"].items():
            metrics.add_metric(name=f"Findings.{finding}", unit=MetricUnit.Count, value=count)
    logger.info("analysed", extra={k: v for k, v in result.items() if k != "warnings"})
    return result
