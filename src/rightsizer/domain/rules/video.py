"""GPUs whose video encoders nobody measured: quiet SMs may still be a transcoder's, so the advice says so and keeps
no one click that would remove them.
"""

from __future__ import annotations

from dataclasses import replace

from rightsizer.domain.facts.measured import Measured
from rightsizer.domain.models import Finding
from rightsizer.domain.models.advice import Confidence
from rightsizer.domain.rules.draft import Draft

VIDEO_HELD_BACK = "video encoders not measured: publish the agent's encoder stats first"


def video_unknown(m: Measured, draft: Draft) -> Draft:
    """Quiet SMs on GPUs whose video encoders nobody measured: said, and no one click that removes them."""
    if not m.video_unknown:
        return draft
    draft = draft.noting(m.video_unknown_text).capped(Confidence.MEDIUM)
    if not draft.actionable:
        return draft
    advice = "publish the encoder stats; if the GPUs still do no work, " + {
        Finding.IDLE: "stop the host (a stop never terminates and keeps its EBS volumes)",
        Finding.SCHEDULABLE: "stop it outside the busy hours",
    }.get(draft.finding, "approve the change")
    return replace(draft, actionable=False, held_back=VIDEO_HELD_BACK, advice=advice)
