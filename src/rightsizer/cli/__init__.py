"""`rightsizer`, the command line: main.py (the parser, `main`, the exit codes' mapping) over one module per verb in
verbs/, over what the verbs share (hosts, deployment, analysis, session, options) and the outputs (output/), over
errors.py. pyproject.toml's `cli` layers contract holds that order: the CLI's imports have no circle."""
