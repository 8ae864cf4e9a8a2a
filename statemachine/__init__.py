"""The state machines' definitions. resize.asl.json is generated (`make asl`, statemachine/build.py) from the shared
workflow (src/rightsizer/domain/workflow/) and every action's fragment (src/rightsizer/domain/actions/);
pipeline.asl.json is written by hand."""
