"""What a host's work needs, and which instance types can carry it. Pure functions over the catalog.

- Units (GPUs / NeuronCores): which are busy, idle, or unseen (`units`).
- GPU memory: a working set that was measured, or a framework's reservation that says nothing about need (`memory`).
- Load: the busiest unit's, by kernel time or each engine's best DCGM signal, and the video engines kept (`load`).
- Demand: the floor every limit of a target must meet (limits.table.LIMITS: units, memory per unit, speed, vCPUs, RAM,
  network, EBS, local NVMe, interconnect, graphics, video engines, architecture), from the host's measured work and
  its set-up (`demand`).
- Projection: the same work on another accelerator, by the largest of the tensor-throughput, memory-
  bandwidth and FP32 ratios (`projection`).
- Targets: the priced types a host could move to, cheapest first, and the candidates that carry its demand
  (`targets`); Neuron alternatives that need a recompiled model (`neuron`); the reasons a resize gives (`reasons`).

By concern, in import-linter's layers (`sizing`, pyproject.toml): `reasons` and `neuron` over `targets`, over
`projection`, over `demand` and `load`, over `memory`, over `units`.
"""
