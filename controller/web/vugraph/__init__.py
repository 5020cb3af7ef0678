"""``bridge-table vugraph``: the public's web view of a session, from ``public/#`` only."""

from controller.web.vugraph.app import build_app, main

__all__ = ["build_app", "main"]
