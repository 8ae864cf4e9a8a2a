"""AWS Organizations: the active member accounts to collect from."""

from __future__ import annotations

from typing import Any


def active_accounts(client: Any) -> list[str]:
    """Account ids of every ACTIVE account in the organization (suspended ones cannot be read)."""
    accounts: list[str] = []
    for page in client.get_paginator("list_accounts").paginate():
        accounts.extend(str(a["Id"]) for a in page.get("Accounts", []) if a.get("Status", "ACTIVE") == "ACTIVE")
    return sorted(accounts)
