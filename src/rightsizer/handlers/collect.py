"""CollectFunction: on its schedule, start the day's pipeline; in the pipeline, plan one target into shards
({"action": "plan"}) or collect and analyse one shard ({"action": "collect"})."""

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rightsizer.bootstrap import lambda_wiring
from rightsizer.bootstrap.pipeline import collect_shard_payload, plan_payload, start_pipeline
from rightsizer.handlers.payload import event_payload

logger, metrics, tracer = Logger(), Metrics(), Tracer()


@logger.inject_lambda_context(correlation_id_path="run")
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    payload, wiring, now = event_payload(event), lambda_wiring(), datetime.now(UTC)
    action = payload.get("action")
    if action == "plan":
        planned = plan_payload(wiring, payload, now)
        metrics.add_metric(name="ShardsPlanned", unit=MetricUnit.Count, value=len(planned["shards"]))
        logger.info(
            "planned", extra={k: v for k, v in planned.items() if k != "shards"} | {"shards": len(planned["shards"])}
        )
        return planned
    if action == "collect":
        result = collect_shard_payload(wiring, payload, now)
        metrics.add_metric(name="InstancesCollected", unit=MetricUnit.Count, value=result["instances"])
        metrics.add_metric(name="GetMetricDataCalls", unit=MetricUnit.Count, value=result["get_metric_data_calls"])
        logger.info("collected", extra={k: v for k, v in result.items() if k != "warnings"})
        return result
    started = start_pipeline(wiring, now)
    metrics.add_metric(name="TargetsPlanned", unit=MetricUnit.Count, value=started.targets)
    return started.summary()
