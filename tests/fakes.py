"""In-memory fakes of our own ports, keeping DynamoStore's contracts (mypy checks them against the Protocols)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from rightsizer.domain.approval import ApprovalStatus, allowed, retryable
from rightsizer.domain.models.advice import Recommendation
from rightsizer.services.ports import Approval, ApprovalUpdate, AuditEntry, Decision, PostedMessage, ScheduleRecord


@dataclass
class MemoryStore:
    """Recommendations, decisions, approvals (with the lifecycle's write rules), audit, posted messages."""

    by_id: dict[str, Recommendation] = field(default_factory=dict)
    latest: dict[str, Recommendation] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    approvals: dict[str, Approval] = field(default_factory=dict)
    audits: list[AuditEntry] = field(default_factory=list)
    updates: list[dict[str, object]] = field(default_factory=list)
    messages: dict[tuple[str, str], PostedMessage] = field(default_factory=dict)
    locks: dict[str, str] = field(default_factory=dict)  # instance id -> holder
    schedule_records: dict[str, ScheduleRecord] = field(default_factory=dict)  # by ScheduleRecord.key

    @classmethod
    def of(cls, *recs: Recommendation, approvals: tuple[Approval, ...] = ()) -> MemoryStore:
        store = cls()
        for rec in recs:
            store.publish(rec)
        store.approvals = {a.recommendation_id: a for a in approvals}
        return store

    def publish(self, rec: Recommendation) -> None:
        self.by_id[rec.recommendation_id] = rec
        self.latest[rec.instance_id] = rec

    # -- recommendations and decisions ------------------------------------------------------------

    def recommendation(self, recommendation_id: str) -> Recommendation | None:
        return self.by_id.get(recommendation_id)

    def is_current(self, rec: Recommendation) -> bool:
        latest = self.latest.get(rec.instance_id)
        return latest is not None and latest.recommendation_id == rec.recommendation_id

    def latest_for_instance(self, instance_id: str) -> Recommendation | None:
        return self.latest.get(instance_id)

    def put_decision(self, decision: Decision) -> None:
        self.decisions.append(decision)

    def active_decisions(self, now: datetime) -> list[Decision]:
        return [d for d in self.decisions if d.until is None or d.until > now]

    def decisions_about(self, rec: Recommendation, now: datetime) -> list[Decision]:
        return [d for d in self.active_decisions(now) if d.instance_id == rec.instance_id]

    # -- approvals (ports.ApprovalRecords) --------------------------------------------------------

    def create_approval(self, approval: Approval) -> bool:
        if approval.recommendation_id in self.approvals:
            return False
        self.approvals[approval.recommendation_id] = approval
        return True

    def approval(self, recommendation_id: str) -> Approval | None:
        return self.approvals.get(recommendation_id)

    def approvals_of(self, recommendation_ids: Sequence[str]) -> dict[str, Approval]:
        return {rid: self.approvals[rid] for rid in recommendation_ids if rid in self.approvals}

    def update_approval(
        self,
        recommendation_id: str,
        *,
        status: ApprovalStatus | None = None,
        detail: str | None = None,
        execution_arn: str | None = None,
        slack_channel: str | None = None,
        slack_ts: str | None = None,
        attempt: int | None = None,
    ) -> ApprovalUpdate:
        current = self.approvals[recommendation_id]  # KeyError, as DynamoStore
        if attempt is not None and attempt != current.attempt:
            return ApprovalUpdate(current, False)  # about another attempt's execution: nothing is written
        changes: dict[str, object] = {}
        moved = status is not None and allowed(current.status, status)
        if moved:
            changes["status"] = status
            if detail is not None:
                changes["detail"] = detail
        if execution_arn and not current.execution_arn:
            changes["execution_arn"] = execution_arn
        if slack_channel is not None:
            changes["slack_channel"] = slack_channel
        if slack_ts is not None:
            changes["slack_ts"] = slack_ts
        self.updates.append(changes)
        updated = replace(current, **changes)  # type: ignore[arg-type]
        self.approvals[recommendation_id] = updated
        return ApprovalUpdate(updated, moved)

    def retry_approval(self, recommendation_id: str, attempt: int, approver: str, at: datetime) -> Approval | None:
        current = self.approvals.get(recommendation_id)
        if current is None or current.attempt != attempt or not retryable(current.status):
            return None
        retried = replace(
            current,
            status=ApprovalStatus.PENDING,
            attempt=attempt + 1,
            approver=approver,
            approved_at=at,
            execution_arn="",
            detail="",
        )
        self.approvals[recommendation_id] = retried
        return retried

    def audit(self, entry: AuditEntry) -> None:
        self.audits.append(entry)

    def events(self) -> list[str]:
        return [entry.event for entry in self.audits]

    # -- posted messages (adapters.slack.messages.MessageStore) -----------------------------------

    def message(self, channel: str, ts: str) -> PostedMessage | None:
        return self.messages.get((channel, ts))

    def messages_showing(self, recommendation_id: str) -> list[PostedMessage]:
        return [m for m in self.messages.values() if recommendation_id in m.recommendation_ids]

    def replace_message(self, message: PostedMessage) -> None:
        key = (message.channel, message.ts)
        if key in self.messages:
            self.messages[key] = replace(message, version=self.messages[key].version + 1)

    def replace_message_if(self, message: PostedMessage) -> bool:
        key = (message.channel, message.ts)
        saved = self.messages.get(key)
        if saved is None or saved.version != message.version:
            return False
        self.messages[key] = replace(message, version=message.version + 1)
        return True

    # -- the resize workflow's lock ------------------------------------------------------------------

    def release_instance_lock(self, instance_id: str, holder: str) -> bool:
        if self.locks.get(instance_id) != holder:
            return False
        del self.locks[instance_id]
        return True

    # -- stop/start schedules ---------------------------------------------------------------------------

    def put_schedule(self, record: ScheduleRecord) -> None:
        self.schedule_records[record.key] = record

    def schedule(self, account_id: str, region: str, instance_id: str) -> ScheduleRecord | None:
        return self.schedule_records.get(f"{account_id}#{region}#{instance_id}")

    def schedules(self) -> list[ScheduleRecord]:
        return list(self.schedule_records.values())

    def delete_schedule(self, account_id: str, region: str, instance_id: str) -> None:
        self.schedule_records.pop(f"{account_id}#{region}#{instance_id}", None)
