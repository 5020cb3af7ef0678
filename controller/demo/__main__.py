"""``python -m controller.demo``: the same as ``bridge-table demo``."""

from .runner import main

raise SystemExit(main())
