"""``python -m controller.demo``: the same as ``bridge-table demo``."""

from controller.demo.runner import main

raise SystemExit(main())
