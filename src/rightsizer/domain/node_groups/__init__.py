"""Node groups: one recommendation for the object that launches a group of GPU nodes, from their per-node analyses.

An EKS managed node group, a Karpenter NodePool, an ECS capacity provider, an AWS Batch compute environment or a
plain Auto Scaling group (`Instance.owner`, read from the nodes' tags) replaces a node that is stopped or resized,
so advice for one node is advice nobody can take. Each node is still analysed on its own (its GPUs, CPU, memory,
network; the `launched_by_owner` adjustment, domain/rules/ownership.py, keeps its finding in
`Recommendation.would_be` and reports it `excluded`), and this fleet-level pass (`grouping`), run where
consolidation runs, turns the nodes of one owner into ONE recommendation whose kind is the owner's
(domain/resources.py), saying what the owner edits:

- the GPUs per node against the GPUs the work uses (k of n on each node, the busiest node named);
- nodes that did no work in the window and that the autoscaler keeps (their whole cost);
- a node type larger than any node's work needs: the per-node downsize targets, of which the largest must carry
  every other node's target (more units, memory per unit, vCPUs, RAM, an accelerator at least as fast); the saving
  is each node's cost at that type, priced as the node is billed and on the hours it runs.

Never one click: the bot sees EC2 and CloudWatch, not the pods, so it cannot check where they would go or whether
their PodDisruptionBudgets allow losing a node. Confidence is medium at most, low when a node could not be judged
(no GPU metrics: never counted idle) or the nodes' needs conflict; a group none of whose nodes could be judged is
`insufficient_data`. Each node's own recommendation stays (excluded, or insufficient_data), saves nothing in the
totals (the group's does) and its first reason names the owner and the group's recommendation.

Pure: no I/O. By concern, in import-linter's layers (`node_groups`, pyproject.toml): the fleet-level pass (`grouping`:
`group_nodes`, `node_group_of`) over the group's recommendation (`advice`), over its verdict (`group`), over what its
nodes' work needs (`fit`), what they cost after the change (`costs`) and what the owner edits (`edits`), over the
nodes (`nodes`).
"""
