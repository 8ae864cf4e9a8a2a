"""PricesFunction: weekly refresh of on-demand prices from the AWS Price List API into the cache."""

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rightsizer.bootstrap import lambda_wiring
from rightsizer.bootstrap.prices import refresh_prices

logger, metrics, tracer = Logger(), Metrics(), Tracer()


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = refresh_prices(lambda_wiring(), datetime.now(UTC))
    metrics.add_metric(name="GetProductsCalls", unit=MetricUnit.Count, value=result["get_products_calls"])
    logger.info("prices cached", extra=result)
    return result
