"""The state machines' definitions. resize.asl.json is generated (`make asl`, statemachine/build.py) from the
fragments in statemachine/resize.py; pipeline.asl.json is written by hand."""
