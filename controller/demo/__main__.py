"""``python -m controller.demo``: the same as ``bridge-table demo``."""

from controller.demo.cli import main

raise SystemExit(main())
