"""Sphinx configuration of the documentation site: the markdown pages of docs/ (MyST), the
API reference from the docstrings (autodoc, napoleon for the ``Parameters:`` sections), the
furo theme. Built with warnings as errors (docs/development.md)::

    uv run --group docs sphinx-build -W --keep-going -j auto -b html docs docs/_build/html
"""

from __future__ import annotations

import logging
from importlib.metadata import version as _version

from sphinx.util.inspect import TypeAliasForwardRef

project = "a2a-py"
author = "The a2a-py authors"
copyright = "the a2a-py authors, Apache-2.0"
release = _version("a2aserve-core")

# accessible-pygments (a dependency of furo) configures the root logger at INFO level when
# it is imported; keep Alembic's chatter (autodoc imports a2a_sql.migrate) out of the build.
logging.getLogger("alembic").setLevel(logging.WARNING)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

html_theme = "furo"
html_title = f"a2a-py {release}"

# MyST: the pages stay plain GitHub markdown; headings get anchors for `page.md#section`.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# autodoc: each automodule of docs/api/ says which members (`:members:` alone: the module's
# __all__, its curated public API; or a list of names), with or without a docstring, in
# source order with their bases; type hints stay in the signatures; napoleon reads the
# Google-style "Parameters:" sections, and the plain reST fields (":param x:") need nothing.
autodoc_default_options = {
    "member-order": "bysource",
    "undoc-members": True,
    "show-inheritance": True,
}
autodoc_typehints = "signature"
# A type in a signature named like an attribute somewhere (`list`, `bytes`, `type`) has
# several targets; Sphinx links the first, which is right, and says so for each: not a fault.
suppress_warnings = ["ref.python"]
autodoc_preserve_defaults = True
autoclass_content = "class"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# The type aliases of the runtime's signatures, shown by name rather than expanded.
autodoc_type_aliases = {
    name: f"a2a_core.server.{name}"
    for name in ("Agent", "AgentResult", "TaskOwner", "AuthorizeTask", "ExtendedCard", "Service")
}
# One parameter a line in long signatures (A2AServer has twenty).
python_maximum_signature_line_length = 100


# Sphinx stands an alias of `autodoc_type_aliases` in for its value as a
# `TypeAliasForwardRef`, whose repr leaked into the page wherever the alias sat inside
# another type (`TaskOwner | None`, `tuple[Service, ...]` came out as
# `TypeAliasForwardRef('a2a_core.server.Service')`): its repr is made the alias's name, which
# Sphinx then links. `.ci/run` fails the build if the class name shows up again.
TypeAliasForwardRef.__repr__ = lambda self: str(self.name)  # type: ignore[method-assign]
