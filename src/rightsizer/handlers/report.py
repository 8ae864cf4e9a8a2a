"""ReportFunction: the fleet report from the latest recommendations, posted to Slack on its schedule."""

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rightsizer.bootstrap import lambda_wiring
from rightsizer.bootstrap.report import report_payload
from rightsizer.handlers.metrics import count_by
from rightsizer.handlers.payload import event_payload

logger, metrics, tracer = Logger(), Metrics(), Tracer()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = report_payload(lambda_wiring(), event_payload(event), datetime.now(UTC))
    metrics.add_metric(
        name="ActionableSavingsUSD", unit=MetricUnit.NoUnit, value=report["totals"]["actionable_savings_usd"]
    )
    for finding, count in report["totals"]["by_finding"].items():  # the dashboard's findings by type
        count_by("Findings", "finding", finding, count)
    logger.info("report", extra={"totals": report["totals"], "posted": bool(report.get("posted"))})
    return report
