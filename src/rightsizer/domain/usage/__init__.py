"""An EC2 host's usage: its raw CloudWatch series (`series`, what the adapters build) reduced to the usage summary
the analyzer works on (`summary.summarize`; `summaries.summarize_all` does many hosts at once with the same helpers).

Series hold numpy arrays (the CloudWatch adapter builds them; tests may pass lists): a shard summarises thousands of
hosts x 14 days of 5-minute data, and one numpy call per statistic instead of a Python loop per datapoint is what
keeps that inside one Lambda's time. Percentiles are nearest-rank (an observed value, never an interpolation), read
from one `np.sort` per series: numpy's vectorised sort beats `np.partition` on metric data (long runs of equal
values: idle zeros, saturated 100s), and one sorted copy answers every percentile, the peak and the loaded-hours cut
of a series.

By concern, in import-linter's layers (`usage`, pyproject.toml): `summary` over `encoders`, `devices` and `flows`,
over `week`, over `clocks`, over `stats`, over `series`. The adapters and the benchmark build the raw series
(`series`).
"""
