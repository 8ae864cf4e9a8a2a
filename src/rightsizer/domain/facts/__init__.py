"""What the rules look at: one host, its usage and prices, and the views derived from them once.

`Facts` is all a rule about exclusions or data sufficiency needs. `Measured` exists only once those rules
have passed, so rules about usage can rely on a spec, an accelerator table entry (or its absence, said
plainly) and a usage summary with enough history. Derived values are cached: several rules ask for the
same demand or the same cheapest downsize, and each is computed once per host.

By concern, in import-linter's layers (`facts`, pyproject.toml): `Measured` (`measured`: the cheapest downsize or why
none, the host's own activity, the confidence) is built in layers over `MeasuredWords` (`words`: its usage in the
reasons' words), over `MeasuredViews` (`views`: its units, memory, load and demand), over `Facts` (`host`); `regime`
says what changed inside the window.
"""
