"""How to install one of our distributions, for the messages that name a missing one.

None is on the package index yet, and ``pip install a2aserve-sql`` would fetch whatever a
stranger published under that name (README, "Install"). So a hint gives what works: the
workspace in a clone of the repository, or the wheel built there, by path.
"""

from __future__ import annotations

__all__ = ["install_hint"]


def install_hint(distribution: str, extra: str = "") -> str:
    """The commands that install ``distribution`` (``a2aserve-sql``), with ``extra``
    (``sqlite``) when it needs one, for the end of an error message."""
    wheel = f"dist/{distribution.replace('-', '_')}-*.whl"
    # An extra goes after the wheel's path, which only the shell can expand first.
    target = f'"$(ls {wheel})[{extra}]"' if extra else wheel
    return (
        f"uv sync --all-packages in a clone of the repository, or pip install {target} "
        "there after uv build --all-packages --out-dir dist (README, Install)"
    )
