"""The Slack function's wiring: the Bolt app with the table, the bot's client, and the resize workflow it starts on an
approval. The acknowledgement never reaches the analyzer or the collectors (the `slack-ack-path` contract)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rightsizer.adapters.slack.app import LambdaEntry, build_app
from rightsizer.adapters.slack.client import web_client
from rightsizer.adapters.slack.secrets import SlackCredentials
from rightsizer.bootstrap import Wiring
from rightsizer.services.approvals import ApprovalStore
from rightsizer.services.ports import ResizeWorkflow
from rightsizer.settings import Settings


def slack_entry(
    wiring: Wiring, credentials: SlackCredentials, lambda_client: Any, lambda_context: Callable[[], Any]
) -> LambdaEntry:
    """The Slack function's entry (a `LambdaEntry` around the Bolt app) for these credentials: the table, the
    bot's client, the resize workflow (built on first approval) and the client that runs lazy listeners."""
    settings = wiring.settings
    client = web_client(credentials.bot_token, settings.slack.api_url)
    workflow = step_functions_workflow(settings, wiring.store, wiring.session.boto3_session, lambda_context)
    app = build_app(
        settings,
        client=client,
        store=wiring.store,
        workflow_factory=workflow,
        signing_secret=credentials.signing_secret,
    )
    return LambdaEntry(app, signing_secret=credentials.signing_secret, lambda_client=lambda_client)


def step_functions_workflow(
    settings: Settings, store: ApprovalStore, session: Any, lambda_context: Callable[[], Any]
) -> Callable[[], ResizeWorkflow]:
    """The Slack app's ResizeWorkflow, built on first use (an approval, in a lazy listener)."""

    def expected_state(recommendation_id: str) -> str | None:
        # The workflow refuses a host that left the state the recommendation saw (e.g. stopped meanwhile).
        rec = store.recommendation(recommendation_id)
        return rec.state if rec is not None else None

    def factory() -> ResizeWorkflow:
        # Imported on the first approval, in a lazy listener: the Step Functions adapter and its client stay off the
        # acknowledgement's cold start (tests/unit/test_slack_ack_path.py; the contract ignores this one import).
        from rightsizer.adapters.aws.workflow import StepFunctionsResizeWorkflow

        if not settings.resize_state_machine_arn:
            raise RuntimeError("RESIZE_STATE_MACHINE_ARN is not set")

        def client_for(region: str) -> Any:  # the instance workflow of another action region
            return session.client("stepfunctions", region_name=region)

        # Two guards: the approval's conditional write elects a single starter, and Powertools idempotency
        # (records in our table) plus the deterministic execution name make a retried start a no-op.
        workflow = StepFunctionsResizeWorkflow.from_settings(
            settings, client_for(settings.home_region), expected_state_of=expected_state, client_for=client_for
        )
        # Lets Powertools expire an in-progress idempotency record if this invocation times out.
        workflow.register_lambda_context(lambda_context())
        return workflow

    return factory
