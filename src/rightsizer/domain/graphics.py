"""Graphics hosts: remote workstations, renderers and game streaming, which need a GPU that runs graphics.

`utilization.gpu` cannot tell a desktop from a training job, so the host is recognised by what it was built and set up
to run: its AMI's name and description (Amazon DCV, NVIDIA GRID/RTX Virtual Workstation and gaming AMIs), its tags
(Name included) and, where the CloudWatch agent's procstat plugin watches them, the processes it runs (dcvserver, Xorg,
Blender, ...). Each sign is one entry of `SIGNS`: a pattern and what it means, said in the reasons.

A sign on a host whose own GPU has no graphics (an A100 tagged "render") is not read as graphics: the work runs on
CUDA there (Cycles, OptiX, V-Ray GPU render in CUDA), and no graphics GPU is needed to keep doing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Sign:
    pattern: re.Pattern[str]
    means: str  # in the reasons: "Amazon DCV remote desktop"


def _sign(pattern: str, means: str) -> Sign:
    return Sign(re.compile(pattern, re.IGNORECASE), means)


SIGNS: tuple[Sign, ...] = (
    _sign(r"(^|[^a-z])(nice[ -]?)?dcv([^a-z]|$)|dcvserver|amazon dcv", "Amazon DCV remote desktop"),
    _sign(
        r"nvidia[ _-]?grid|grid[ _-]?driver|vgpu|rtx virtual workstation|(^|[^a-z])vws([^a-z]|$)|quadro",
        "NVIDIA GRID / RTX Virtual Workstation driver",
    ),
    _sign(
        r"nvidia[ _-]?gaming|gaming[ _-]?(pc|driver)|game[ _-]?stream|cloud[ _-]?gaming",
        "NVIDIA gaming / game streaming",
    ),
    _sign(r"opengl|vulkan|directx", "a graphics API"),
    _sign(r"(^|[^a-z])(xorg|x11)([^a-z]|$)", "an X server on the GPU"),
    _sign(
        r"workstation|(^|[^a-z])vdi([^a-z]|$)|remote[ -]?desktop|teradici|pcoip|anyware|parsec", "a remote workstation"
    ),
    _sign(
        r"render|blender|maya|houdini|3ds ?max|cinema ?4d|unreal|omniverse|keyshot|twinmotion",
        "rendering / 3D content creation",
    ),
)


# Any sign at all, in one search: most texts (tags of compute hosts) match none.
_ANY = re.compile("|".join(f"(?:{sign.pattern.pattern})" for sign in SIGNS), re.IGNORECASE)


def signs_in(text: str) -> tuple[str, ...]:
    """What the text says the host runs (the meanings of the signs it matches), in SIGNS' order."""
    if not _ANY.search(text):
        return ()
    return tuple(sign.means for sign in SIGNS if sign.pattern.search(text))


def graphics_evidence(image: str, tags: Mapping[str, str], processes: Iterable[str]) -> tuple[str, ...]:
    """Why the host is a graphics host, one phrase per source that says so (empty: nothing does)."""
    found: list[str] = []
    if image and (means := signs_in(image)):
        found.append(f"its AMI '{image}' ({', '.join(means)})")
    for key, value in sorted(tags.items()):
        if key.startswith("aws:"):
            continue
        if means := signs_in(f"{key}={value}"):
            found.append(f"tag {key}={value} ({', '.join(means)})")
    running = [name for name in processes if signs_in(name)]
    if running:
        found.append(f"{', '.join(running)} running (the CloudWatch agent's procstat)")
    return tuple(found)
