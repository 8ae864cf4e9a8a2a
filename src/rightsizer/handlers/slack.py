"""SlackFunction: the Slack app behind a Lambda Function URL (slash command and buttons)."""

from functools import cache, lru_cache
from typing import Any

import boto3
from aws_lambda_powertools import Logger

from rightsizer.adapters.aws.store import DynamoStore
from rightsizer.adapters.slack.app import LambdaEntry, build_app, step_functions_workflow
from rightsizer.adapters.slack.client import web_client
from rightsizer.adapters.slack.secrets import SlackCredentials, SlackNotConfigured, slack_credentials
from rightsizer.settings import Settings

logger = Logger()
settings = cache(Settings.from_env)
_invocation: dict[str, Any] = {"context": None}  # the current Lambda context, for the resize starter


@lru_cache(maxsize=1)  # one app per credentials: a rotated secret rebuilds it, a warm call reuses it
def _entry(credentials: SlackCredentials) -> LambdaEntry:
    config, session = settings(), boto3.Session()
    store = DynamoStore.from_name(session, config.table_name, config.home_region)
    client = web_client(credentials.bot_token, config.slack.api_url)
    workflow = step_functions_workflow(config, store, session, lambda: _invocation["context"])
    app = build_app(
        config, client=client, store=store, workflow_factory=workflow, signing_secret=credentials.signing_secret
    )
    return LambdaEntry(
        app, signing_secret=credentials.signing_secret, lambda_client=lambda_client(session, config.home_region)
    )


def lambda_client(session: boto3.Session, region: str) -> Any:
    """Re-invokes this function for Bolt's lazy listeners (replaced in-process by the demo)."""
    return session.client("lambda", region_name=region)


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        credentials = slack_credentials(settings().slack.secret_name)
    except SlackNotConfigured as error:
        logger.error(str(error))  # names the secret and the missing key, never a value
        return {"statusCode": 503, "body": "The GPU Rightsizer Slack app is not configured yet."}
    _invocation["context"] = context
    return _entry(credentials)(event, context)
