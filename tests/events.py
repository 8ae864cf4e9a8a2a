"""The sample events in events/ — the same files `sam local invoke -e` uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parent.parent / "events"


def load_event(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return data
