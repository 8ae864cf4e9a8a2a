"""boto3 sessions and clients, and one-line descriptions of AWS failures.

Clients come from boto3's default credential chain and honour `AWS_ENDPOINT_URL` (boto3 reads it
itself), so the same code runs against AWS or a local moto server.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from contextlib import suppress
from functools import cache
from typing import Any, TypeVar

import boto3
import botocore.session
from botocore.config import Config
from botocore.configloader import raw_config_parse
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConfigNotFound,
    ConfigParseError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from rightsizer.services.ports import SourceUnavailable

# Every way a call to AWS can fail to give an answer: AWS's error, botocore's (credentials, network, timeouts), and an
# answer botocore cannot parse (ResponseParserError is no BotoCoreError: e.g. an emulator's HTML 500 page).
AWS_FAILURES: tuple[type[Exception], ...] = (BotoCoreError, ClientError, ResponseParserError)

# Adaptive retries back off on throttling; 10 attempts in all (the first and 9 retries) ride out a busy account.
STANDARD_CONFIG = Config(
    retries={"total_max_attempts": 10, "mode": "adaptive"},
    connect_timeout=5,
    read_timeout=60,
    user_agent_extra="gpu-rightsizer",
)
# The CLI: a person is waiting. A refused connection fails within seconds, a hung endpoint within about a
# minute (3 attempts x 20 s), instead of 10 attempts x 60 s. `--cli-connect-timeout`/`--cli-read-timeout`
# change the timeouts, as in the AWS CLI.
CLI_CONNECT_TIMEOUT = 3
CLI_READ_TIMEOUT = 20
CLI_MAX_ATTEMPTS = 3


def interactive_config(connect_timeout: float = CLI_CONNECT_TIMEOUT, read_timeout: float = CLI_READ_TIMEOUT) -> Config:
    return Config(
        retries={"total_max_attempts": CLI_MAX_ATTEMPTS, "mode": "standard"},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        user_agent_extra="gpu-rightsizer-cli",
    )


# The metric client's requests skip botocore's client-side parameter validation: walking each GetMetricData request's
# 500 queries member by member was a third of the CLI's CPU at 2,000 hosts. The requests are no less checked: what the
# collector sends is held to botocore's model by tests/unit/test_metric_data.py (AWS itself rejects a bad one).
UNVALIDATED = Config(parameter_validation=False)

# For optional sources with a fallback (the Price List API in auto mode): fail fast, then fall back.
QUICK_CONFIG = Config(retries={"total_max_attempts": 2, "mode": "standard"}, connect_timeout=3, read_timeout=15)

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "RequestThrottled",
    }
)


class AwsSession:
    """A boto3 session for one account (ours, or one reached by assuming a role)."""

    def __init__(
        self, session: boto3.Session | None = None, account_id: str | None = None, config: Config = STANDARD_CONFIG
    ) -> None:
        self._session = session or boto3.Session()
        self._account_id = account_id
        self._config = config
        self._metrics: boto3.Session | None = None

    @classmethod
    def for_profile(cls, profile: str | None, config: Config) -> AwsSession:
        """A session for a named profile (None: the default chain). Raises ProfileNotFound."""
        return cls(boto3.Session(profile_name=profile), config=config)

    def check_files(self) -> None:
        """Parse the AWS config and shared credentials files now: a malformed one raises ConfigParseError (naming it)
        here, not in the middle of a run (botocore reads the credentials file only when a first call needs keys)."""
        core = self._session._session  # boto3 has no public accessor for its botocore session
        core.full_config  # noqa: B018 -- parses the config file
        credentials_file = core.get_config_variable("credentials_file")
        if credentials_file:
            with suppress(ConfigNotFound):  # no credentials file is fine: keys may come from the environment or a role
                raw_config_parse(credentials_file)

    @property
    def boto3_session(self) -> boto3.Session:
        return self._session

    @property
    def region_name(self) -> str | None:
        """The region the profile or AWS_DEFAULT_REGION names, if any."""
        return self._session.region_name

    def client(
        self,
        service: str,
        region: str,
        *,
        quick: bool = False,
        metric_arrays: bool = False,
        extra: Config | None = None,
    ) -> Any:
        """A client of this session. `metric_arrays`: GetMetricData's datapoints come as numpy arrays, decoded by a
        parser made for them (adapters/aws/metric_data.py) instead of botocore's generic walk of the response, which
        was most of the CPU of reading 14 days of CloudWatch datapoints, and its queries are written without that walk
        too; other timestamps stay as the wire has them.
        `extra`: settings on top of the session's (e.g. S3's SigV4 for presigned links)."""
        session = self._metric_session() if metric_arrays else self._session
        factory: Any = session.client  # typed per service literal; callers treat clients as Any
        config = QUICK_CONFIG if quick else self._config
        if metric_arrays:
            config = config.merge(UNVALIDATED)
        client = factory(service, region_name=region, config=config.merge(extra) if extra is not None else config)
        if metric_arrays:
            from rightsizer.adapters.aws.metric_data import MetricDataSerializer

            # botocore has no component for serializers (its parsers have one): the client's own is wrapped.
            client._serializer = MetricDataSerializer(client._serializer)
        return client

    def _metric_session(self) -> boto3.Session:
        """A sibling session with the same credentials whose response parsers decode GetMetricData into arrays and
        keep timestamps raw. The parser factory is a component of the botocore session, so it is set on a session of
        its own: the other clients of this session keep botocore's parsers."""
        if self._metrics is None:
            from rightsizer.adapters.aws.metric_data import MetricDataParsers  # numpy: not on the Slack path

            profile = self._session.profile_name
            core = botocore.session.Session(profile=profile if profile in self._session.available_profiles else None)
            parsers = MetricDataParsers()
            parsers.set_parser_defaults(timestamp_parser=_keep_raw)
            core.register_component("response_parser_factory", parsers)
            credentials = self._session.get_credentials()
            if credentials is not None:
                frozen = credentials.get_frozen_credentials()
                core.set_credentials(str(frozen.access_key), str(frozen.secret_key), frozen.token)
            self._metrics = boto3.Session(botocore_session=core, region_name=self._session.region_name)
        return self._metrics

    def account_id(self, region: str) -> str:
        if self._account_id is None:
            self._account_id = str(self.client("sts", region).get_caller_identity()["Account"])
        return self._account_id

    def assume(self, role_arn: str, session_name: str, region: str) -> AwsSession:
        credentials = self.client("sts", region).assume_role(RoleArn=role_arn, RoleSessionName=session_name)[
            "Credentials"
        ]
        session = boto3.Session(
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials["SessionToken"],
        )
        return AwsSession(session, account_id=role_arn.split(":")[4], config=self._config)


T = TypeVar("T")


def read_source(what: str, region: str, call: Callable[[], T]) -> T:
    """`call()`, or SourceUnavailable however it fails to get an answer it can read (after botocore's retries), for a
    source whose reader has a defined answer without it (a warning, a one click held back: domain/guards.py)."""
    try:
        return call()
    except AWS_FAILURES as error:
        raise SourceUnavailable(f"{what}: {describe_aws_error(error, region)}") from error
    except NotImplementedError as error:  # in-process moto raises it for an API it lacks
        raise SourceUnavailable(f"{what}: not implemented by the endpoint in {region} ({error})") from error
    except (KeyError, TypeError, ValueError) as error:  # an answer without the fields the API documents
        raise SourceUnavailable(f"{what}: unreadable answer in {region} ({type(error).__name__}: {error})") from error


def _keep_raw(value: Any) -> Any:
    return value


@cache
def known_regions() -> frozenset[str]:
    # botocore's bundled endpoint data: no profile, credentials or network involved.
    session = botocore.session.Session()
    regions: set[str] = set()
    for partition in session.get_available_partitions():
        regions.update(session.get_available_regions("ec2", partition_name=partition))
    return frozenset(regions)


def describe_aws_error(error: BaseException, region: str | None = None) -> str:
    """One clear sentence for the person at the terminal (or in Slack): no traceback."""
    where = f" in {region}" if region else ""
    if isinstance(error, NoCredentialsError | PartialCredentialsError):
        return (
            "no AWS credentials found: run `aws configure`, set AWS_PROFILE, or export "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        )
    if isinstance(error, ProfileNotFound):
        profile = error.kwargs.get("profile", "")
        return (
            f"AWS profile {profile!r} not found in the AWS config files: check --profile or AWS_PROFILE "
            "(`aws configure list-profiles` lists them)"
        )
    if isinstance(error, ConfigParseError):
        return config_file_problem(error)
    if isinstance(error, NoRegionError):
        return "no AWS region given: pass --region, set AWS_REGION or AWS_DEFAULT_REGION, or add one to the profile"
    if isinstance(error, ReadTimeoutError | ConnectTimeoutError):
        endpoint = error.kwargs.get("endpoint_url", "endpoint")
        return f"no answer from AWS{where} ({endpoint}) in time, after retries: check the network or AWS_ENDPOINT_URL"
    if isinstance(error, EndpointConnectionError):
        endpoint = error.kwargs.get("endpoint_url", "endpoint")
        return f"cannot reach AWS{where} ({endpoint}): check the network or AWS_ENDPOINT_URL"
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "Unknown")
        message = error.response.get("Error", {}).get("Message", "")
        operation = error.operation_name
        if code in THROTTLING_CODES:
            return f"AWS kept throttling {operation}{where} after retries: try again later or analyse fewer regions"
        if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess"):
            return (
                f"access denied to {operation}{where}: the rightsizer needs read-only EC2, CloudWatch and "
                "Pricing permissions (docs/iam.md)"
            )
        if code in (
            "AuthFailure",
            "InvalidClientTokenId",
            "ExpiredToken",
            "ExpiredTokenException",
            "SignatureDoesNotMatch",
        ):
            return f"AWS rejected the credentials{where} ({code}): refresh them and try again"
        if code == "OptInRequired":
            return f"region{where} is not enabled for this account (OptInRequired)"
        return f"{operation} failed{where}: {code}: {_one_line(message)}".rstrip(": ")
    if isinstance(error, ResponseParserError):  # not a BotoCoreError: e.g. a 500 whose body is an HTML page
        detail = str(error).split("\n", 1)[0].split(" Further retries", 1)[0].rstrip(":. ")
        return f"the answer from AWS{where} is not an AWS response ({detail}): an endpoint or proxy without this API?"
    if isinstance(error, BotoCoreError):
        return f"AWS request failed{where}: {error}"
    return f"{type(error).__name__}: {error}"


def config_file_problem(error: ConfigParseError) -> str:
    """A malformed AWS config or credentials file, named, with what the INI parser found wrong."""
    path = error.kwargs.get("path", "an AWS config file")
    detail = _ini_problem(error.kwargs.get("error"))
    return (
        f"cannot parse the AWS config file {path}{detail}: fix it (every section a [name] line, every setting "
        "`key = value`), or point AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE at another one"
    )


def _ini_problem(cause: object) -> str:
    """Where configparser stopped, as " (line 3: 'region us-east-1')"; "" when it does not say."""
    errors = getattr(cause, "errors", None)  # ParsingError: every bad line
    if errors:
        number, line = errors[0]  # the line as repr() wrote it, its newline included
        return f" (line {number}: {_one_line(_unrepr(str(line)), 80)!r})"
    number = getattr(cause, "lineno", None)  # MissingSectionHeaderError: the first line outside a [section]
    if number is not None:
        return f" (line {number}: {_one_line(str(getattr(cause, 'line', '')), 80)!r} is outside a [section])"
    return ""


def _unrepr(text: str) -> str:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def _one_line(text: str, limit: int = 300) -> str:
    """An error message as one line (an emulator's 500 page has many), at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
