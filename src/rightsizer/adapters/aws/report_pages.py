"""The daily report's page in the stack's bucket (template.yaml's PlanBucket: private, encrypted, its objects
expire), and a presigned link to it for the Slack report.

A presigned URL carries the signer's credentials: the reader gets s3:GetObject on this one key with the report
function's rights, until the link expires. Signed with a Lambda function's temporary credentials it stops working
when those expire, which can be before `LINK_SECONDS`: the Slack line says "within".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from rightsizer.services.daily_report import PageNotPublished, PublishedPage
from rightsizer.services.report import FleetReport

# Presigned links are SigV4 (X-Amz-Expires): SigV2's are deprecated and botocore still makes them for S3 by default.
PRESIGN_CONFIG = Config(signature_version="s3v4")
PREFIX = "reports/"  # template.yaml: the lifecycle rule that expires pages, the report function's s3:PutObject
LINK_SECONDS = 12 * 3600
CONTENT_TYPE = "text/html; charset=utf-8"


def page_key(now: datetime, post_key: str = "") -> str:
    """One object per scheduled post (a retried post overwrites its own page), else per run time."""
    stamp = re.sub(r"[^0-9A-Za-z]", "", post_key.rsplit("#", 1)[-1]) if post_key else ""
    when = now.astimezone(UTC)
    return f"{PREFIX}{when:%Y/%m/%d}/fleet-report-{stamp or f'{when:%Y%m%dT%H%M%SZ}'}.html"


def publish_page(
    s3: Any, bucket: str, html: str, now: datetime, *, post_key: str = "", expires_in: int = LINK_SECONDS
) -> PublishedPage:
    """PutObject the page (the bucket encrypts it by default) and presign a GetObject of it."""
    key = page_key(now, post_key)
    s3.put_object(
        Bucket=bucket, Key=key, Body=html.encode("utf-8"), ContentType=CONTENT_TYPE, CacheControl="private, no-store"
    )
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=expires_in)
    return PublishedPage(bucket, key, str(url), now + timedelta(seconds=expires_in))


@dataclass(frozen=True)
class S3PagePublisher:
    """`PagePublisher` into the stack's bucket: `render` draws the page (adapters/html, wired in bootstrap); the S3
    client (presigning with PRESIGN_CONFIG) is made on first use."""

    s3: Callable[[], Any]
    bucket: str
    render: Callable[[FleetReport], str]

    def publish(self, report: FleetReport, now: datetime, post_key: str) -> PublishedPage:
        html = self.render(report)
        s3 = self.s3()
        try:
            return publish_page(s3, self.bucket, html, now, post_key=post_key)
        except (BotoCoreError, ClientError) as error:
            raise PageNotPublished(str(error)) from error
