"""Every resource a target type must carry, one entry each (`LIMITS`), and what the work needs of them (`Demand`).

An expert checks every resource a smaller host has less of: GPU count and memory, how fast its accelerators run the
work, vCPUs, RAM, the network at its baseline (not its "up to"), EBS throughput and IOPS at their baseline, the local
NVMe, EFA and the interconnect, graphics, the video engines, the CPU architecture. Each is one `Limit`:

- `offers`: what a type has of it, as a number (a flag is 1 or 0), read once per catalog (from DescribeInstanceTypes
  and the accelerator table);
- `needs`: the floor the host's measured work (with its headroom) or its set-up puts on it (0: none);
- `says`: the sentence it adds to a target's reason; `short`: why a cheaper type fell short of it.

A type carries the work when it offers at least what every limit needs (sizing.targets.candidates compares the two
vectors, type by type, cheapest first). The first limit a cheaper type falls short of is named in the reasons
("decided by"), so advice says what ruled the cheaper types out. Adding a limit is one entry of `LIMITS`
(`table`; and, where the host's work sets it, one field of `Demand`).

The platform is carried where targets are priced: a host is compared only with types that have a price on its own
platform (domain/platforms.py; a Windows host is never moved to a type sold without Windows).

By concern, in import-linter's layers (`limits`, pyproject.toml): `demand` (`Demand`, whose floors are read through the
table) over `table` (`LIMITS`, `NAMED`, `offered`, `sentence`), over `speed` (the projection of the work onto a
target, and one limit per DCGM engine), over `limit` (`Limit`, `Offer`, `Speaks`). The lower modules name `Demand` in
their types only (under TYPE_CHECKING): a limit reads a demand when it is called.
"""
