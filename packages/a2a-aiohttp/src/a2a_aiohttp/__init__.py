"""aiohttp adapter for a2a-core.

The adapter is a thin translation between aiohttp requests and the core's ``HttpRequest``
/ ``HttpResponse`` values. Until the runtime lands it exposes only the version, so that the
package installs and type-checks as part of the workspace.
"""

from importlib.metadata import version as _version

__version__: str = _version("a2a-aiohttp")

__all__ = ["__version__"]
