"""What the Slack listeners share: the store, the settings, the workflow and the clock, in one small object.

Bolt injects listener arguments by name, from its own (`ack`, `respond`, `client`, `command`, `body`) and from
the request's context: `register` puts a `Deps` in every request's context as `deps`, so each listener is a
plain top-level function. `Ack` and `Respond` are the parts of Bolt's callables the listeners use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from rightsizer.adapters.slack.messages import MessageStore
from rightsizer.services import approvals
from rightsizer.services.ports import Approval, Decision, ResizeWorkflow, ScheduleRecord
from rightsizer.services.ranking import Ranking
from rightsizer.settings import Settings


class SlackStore(approvals.ApprovalStore, MessageStore, Protocol):
    """What the Slack app reads and writes (DynamoStore in AWS): by key, never the whole fleet."""

    def ranking(self) -> Ranking | None: ...

    def approvals_of(self, recommendation_ids: Sequence[str]) -> Mapping[str, Approval]: ...

    def active_decisions(self, now: datetime) -> list[Decision]: ...

    def claim_request(self, digest: str, now: datetime, keep: timedelta = ...) -> bool: ...

    def schedules(self) -> list[ScheduleRecord]: ...


class Ack(Protocol):
    """Bolt's `ack`: acknowledges the request, with an immediate answer or without one."""

    def __call__(self, text: str = "", *, response_type: str | None = None) -> object: ...


class Respond(Protocol):
    """Bolt's `respond`: posts to the request's response_url (private answers, edits of ephemeral messages)."""

    def __call__(
        self,
        text: str = "",
        blocks: Sequence[dict[str, Any]] | None = None,
        *,
        response_type: str | None = None,
        replace_original: bool | None = None,
    ) -> object: ...


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Deps:
    settings: Settings
    store: SlackStore
    workflow_factory: Callable[[], ResizeWorkflow]
    clock: Callable[[], datetime] = utc_now

    @property
    def command_name(self) -> str:
        command = self.settings.slack.command
        return command if command.startswith("/") else f"/{command}"

    def __deepcopy__(self, memo: dict[int, Any]) -> Deps:
        # Bolt deep-copies the context for lazy listeners; the services are shared, never copied.
        return self
