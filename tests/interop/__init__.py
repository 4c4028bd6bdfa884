"""Interop with the official ``a2a-sdk`` client (1.x in-process; 0.3.x in its own venv)."""
