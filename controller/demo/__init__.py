"""``bridge-table demo [--lang en|vi|zh] [--speed X]``: a whole board on a simulated table.

The board is ``controller/data/demo.pbn``; on the way the demo makes a defender revoke (he
ruffs while holding the suit led), the controller flags it, it gets established when the
offending side plays to the next trick, and Law 64 transfers tricks when play ends. On a
terminal the table is drawn live; otherwise (``not isatty``) it prints plain lines. It ends
with the result, the score and the board's PBN.

Four parts: ``plan`` (what the simulated players do, as wire-contract events),
``view`` (the terminal, in the chosen language), ``runner`` (the broker, the daemon, the
firmware bridge on the simulated table, Ctrl-C) and ``cli`` (the command line).
"""

from __future__ import annotations

from controller.demo.plan import DemoError, DemoPlan, load_board, plan_board
from controller.demo.runner import TABLE, bridge_config_dict, run_demo
from controller.demo.view import LANGS, TableView, result_line

__all__ = ["LANGS", "TABLE", "DemoError", "DemoPlan", "TableView",
           "bridge_config_dict", "load_board", "plan_board", "result_line", "run_demo"]
