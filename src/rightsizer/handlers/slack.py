"""SlackFunction: the Slack app behind a Lambda Function URL (slash command and buttons). Wiring: bootstrap/slack.py."""

from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger

from rightsizer.adapters.slack.secrets import SlackCredentials, SlackNotConfigured, slack_credentials
from rightsizer.bootstrap import lambda_wiring

logger = Logger()
_invocation: dict[str, Any] = {"context": None}  # the current Lambda context, for the resize starter


@lru_cache(maxsize=1)  # one app per credentials: a rotated secret rebuilds it, a warm call reuses it
def _entry(credentials: SlackCredentials) -> Any:
    # Bolt and the app (about 0.1 s) load with the first request rather than when Lambda imports this module: the
    # first acknowledgement pays for them either way, and the handler's cold import stays what bench/slack_bench.py
    # measures.
    from rightsizer.bootstrap.slack import slack_entry

    wiring = lambda_wiring()
    lazy = lambda_client(wiring.session.boto3_session, wiring.settings.home_region)
    return slack_entry(wiring, credentials, lazy, lambda: _invocation["context"])


def lambda_client(session: Any, region: str) -> Any:
    """Re-invokes this function for Bolt's lazy listeners (replaced in-process by the demo)."""
    return session.client("lambda", region_name=region)


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        credentials = slack_credentials(lambda_wiring().settings.slack.secret_name)
    except SlackNotConfigured as error:
        logger.error(str(error))  # names the secret and the missing key, never a value
        return {"statusCode": 503, "body": "The GPU Rightsizer Slack app is not configured yet."}
    _invocation["context"] = context
    response: dict[str, Any] = _entry(credentials)(event, context)
    return response
