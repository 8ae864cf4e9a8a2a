"""Zero import circles, module by module (pyproject.toml's `no-cycles` contract compares sibling packages; this also
sees a package's __init__ and its own modules). Imports under TYPE_CHECKING never run, so they do not count."""

from __future__ import annotations

import grimp


def test_no_module_reaches_itself_through_its_imports() -> None:
    graph = grimp.build_graph("rightsizer", exclude_type_checking_imports=True, cache_dir=None)
    circles = [
        (module, *chain)
        for module in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if (chain := graph.find_shortest_chain(importer=imported, imported=module)) is not None
    ]

    assert circles == []
    assert (
        graph.find_shortest_chain(importer="rightsizer.cli.main", imported="rightsizer.cli.errors") is not None
    )  # it sees
