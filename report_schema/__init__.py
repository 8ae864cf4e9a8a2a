"""The build-time generator of schema/report.schema.json's enums (`make schema`); not shipped in any Lambda package.

Named apart from schema/: a package called `schema` would shadow PyPI's `schema`, which policy_sentry imports.
"""
