"""An EC2 host's rules, one small function each, one module per concern; `registry` says the order they are asked in.

- `registry`: `GATES`, `FINDING_RULES` and `ADJUSTMENTS`, what domain/analyzer.py asks.
- Gates: `exclusions` (reported, not analysed), `insufficient_data`, `mig_slices` (with the adjustment that sizes
  MIG GPUs beside GPUs that report).
- Findings from measured usage, each module with its `RULES` in order: `lost_gpus`, `quiet_accelerators`,
  `cpu_bound`, `out_of_memory`, `saturation`, `schedule`, and `downsizing` (the sizing verdicts, asked last).
- Adjustments: `changes`, `held_back`, `ownership`, `pricing`.
- Shared: `stopping` and `video` (risks and unknowns several findings say), `draft` (the `Draft` a rule returns).

Adding a finding means its rule in the module of its concern, listed in that module's `RULES` (a new concern: a new
module, placed in `registry.FINDING_RULES`), its entry in domain/findings.py (the `Finding` member and its
`FindingSpec`: label, attention, action, and the words of its row in docs/how-it-decides.md), then `make schema`
(the JSON schema's enum and that row are generated). The modules' layers are an import-linter contract (`rules`,
pyproject.toml).
"""
