"""Starlette / ASGI adapter for a2a-core.

The adapter is a thin translation between Starlette requests and the core's ``HttpRequest``
/ ``HttpResponse`` values. Until the runtime lands it exposes only the version, so that the
package installs and type-checks as part of the workspace.
"""

from importlib.metadata import version as _version

__version__: str = _version("a2a-starlette")

__all__ = ["__version__"]
