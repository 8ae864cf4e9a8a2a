"""The instance workflow as Python that writes Amazon States Language (statemachine/resize.asl.json, `make asl`).

Pure builders of dicts, no I/O: `asl` (the vocabulary), `fragments` (the shapes every section repeats), `plugs` (an
action's `Fragment` and how the shared Choices are composed from every action's), the shared sections (`entry`,
`host`, `sagemaker`, `ending`) and `machine`, which puts them together with each action's own states
(domain/actions/<kind>.py).
"""
