"""Slack credentials from Secrets Manager, through Powertools Parameters (cached across warm invocations).

The secret holds JSON: {"bot_token": "xoxb-...", "signing_secret": "..."}. Values never appear in logs,
errors or reprs: a misconfiguration is reported by naming the secret and the missing key only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CACHE_SECONDS = 300  # a rotated secret reaches warm functions within five minutes
SETUP_HINT = "see docs/connect-slack.md (aws secretsmanager put-secret-value)"


class SlackNotConfigured(RuntimeError):
    """The Slack secret is missing, empty, or lacks a key. The message never contains secret material."""


@dataclass(frozen=True)
class SlackCredentials:
    bot_token: str = field(repr=False)
    signing_secret: str = field(repr=False)


def parse_credentials(value: Any, secret_name: str) -> SlackCredentials:
    """Validate the secret's decoded JSON; the error names what is wrong, never the values."""
    if not isinstance(value, dict):
        raise SlackNotConfigured(
            f"secret {secret_name} must be a JSON object with bot_token and signing_secret; {SETUP_HINT}"
        )
    missing = [key for key in ("bot_token", "signing_secret") if not isinstance(value.get(key), str) or not value[key]]
    if missing:
        raise SlackNotConfigured(f"secret {secret_name} has no {' or '.join(missing)}; {SETUP_HINT}")
    bot_token = str(value["bot_token"]).strip()
    if not bot_token.startswith("xoxb-"):
        raise SlackNotConfigured(f"secret {secret_name}: bot_token must be a bot token (xoxb-...); {SETUP_HINT}")
    return SlackCredentials(bot_token=bot_token, signing_secret=str(value["signing_secret"]).strip())


def slack_credentials(secret_name: str, *, max_age: int = CACHE_SECONDS) -> SlackCredentials:
    """The bot token and signing secret from `secret_name`; raises SlackNotConfigured with a fix-it message."""
    if not secret_name:
        raise SlackNotConfigured("SLACK_SECRET_NAME is not set (template.yaml sets it to the SlackSecret resource)")
    # Imported here: Powertools Parameters pulls in boto3, which callers that only validate do not need.
    from aws_lambda_powertools.utilities.parameters import get_secret
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError, TransformParameterError

    try:
        value = get_secret(secret_name, transform="json", max_age=max_age)
    except TransformParameterError:
        raise SlackNotConfigured(f"secret {secret_name} is not valid JSON; {SETUP_HINT}") from None
    except GetParameterError as error:
        # A secret created by the stack has no value until someone puts one (ResourceNotFoundException).
        reason = (
            "has no value yet (or does not exist)"
            if "ResourceNotFound" in str(error)
            else f"cannot be read ({_error_code(error)})"
        )
        raise SlackNotConfigured(f"secret {secret_name} {reason}; {SETUP_HINT}") from None
    return parse_credentials(value, secret_name)


def _error_code(error: Exception) -> str:
    cause = error.__cause__ or error.__context__
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", type(cause).__name__))
    return type(error).__name__
