"""Normalise the event shapes our Lambdas receive into one payload dict."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def event_payload(event: Mapping[str, Any] | None) -> dict[str, Any]:
    """EventBridge Scheduler's default event carries `detail` as a JSON *string* ("{}"); Step Functions
    and direct invocations pass the payload itself. Either way the handler sees a plain dict."""
    if not event:
        return {}
    if event.get("source") == "aws.scheduler" and "detail-type" in event:
        detail = event.get("detail") or {}
        if isinstance(detail, str):
            try:
                detail = json.loads(detail) if detail.strip() else {}
            except ValueError:
                raise ValueError(f"scheduler event detail is not JSON: {detail[:200]!r}") from None
        payload = dict(detail) if isinstance(detail, Mapping) else {}
        payload.setdefault("trigger", "schedule")
        payload.setdefault("scheduled_time", event.get("time"))
        return payload
    return dict(event)
