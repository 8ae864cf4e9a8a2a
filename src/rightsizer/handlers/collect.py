"""CollectFunction: on its schedule, plan targets and start the pipeline; per Map item, collect one target."""

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
    payload, settings, now = event_payload(event), Settings.from_env(), datetime.now(UTC)
    if "target" not in payload:
        started = bootstrap.start_pipeline(AwsSession(), settings, now)
        metrics.add_metric(name="TargetsPlanned", unit=MetricUnit.Count, value=started["targets"])
        return started
    result = bootstrap.collect_target_payload(AwsSession(), settings, payload, now)
    metrics.add_metric(name="InstancesCollected", unit=MetricUnit.Count, value=result["instances"])
    metrics.add_metric(name="GetMetricDataCalls", unit=MetricUnit.Count, value=result["api_calls"]["get_metric_data"])
    logger.info("collected", extra={k: v for k, v in result.items() if k != "warnings"})
    return result
