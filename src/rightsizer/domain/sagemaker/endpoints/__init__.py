"""Endpoint variants: the facts, gates and rules that judge one production variant, and their recommendations.

Pure: no I/O (see the SageMaker package's docstring for what SageMaker publishes and how it is read). The modules,
in their layers: `analysis` (one recommendation per variant) over `gates`, `verdicts` and `sizing`, over `load`
(what its metrics say in words), over `facts`.
"""
