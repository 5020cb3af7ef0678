"""Law 27: an insufficient bid (2017 27B4: replaced by another insufficient bid).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

from law_cases import auction, calls

from controller.laws.cards import Rules


def test_27b4_insufficient_bid_replaced_by_another_accepted_by_lho() -> None:
    """2017 27B4: the insufficient bid replaced by another insufficient bid: LHO may accept
    it; the auction goes on from it and later calls are judged against it."""
    h = auction(Rules.L2017, "C:N:1S C:E:1H C:E:1D")
    ib = h.final_alerts()[h.alerts("INSUFFICIENT_BID")[0]["id"]]
    assert ib["status"] == "open" and ib["law"] == "27B4" and ib["call"] == "1D"
    h.run("C:S:1H")                          # sufficient over 1D: S accepts it
    ib = h.final_alerts()[ib["id"]]
    assert (ib["status"], ib["detail"], ib["law"]) == ("resolved", "accepted", "27B4")
    assert calls(h) == [["N", "1S"], ["E", "1D"], ["S", "1H"]]
    assert len(h.alerts("INSUFFICIENT_BID")) == len([a for a in h.alerts("INSUFFICIENT_BID")
                                                      if a["id"] == ib["id"]])
    h.run("C:W:P C:N:P C:E:P")
    assert h.state()["contract"] == "1H"


def test_27b4_accepted_by_a_ruling_and_later_insufficient_bid_judged_against_it() -> None:
    h = auction(Rules.L2017, "C:N:1S C:E:1H C:E:1D")
    ib = h.alerts("INSUFFICIENT_BID")[0]
    h.rule("accept", alert=ib["id"])
    assert h.final_alerts()[ib["id"]]["law"] == "27B4"
    h.run("C:S:1C")                          # insufficient over 1D: a new irregularity
    assert h.alerts("INSUFFICIENT_BID")[-1]["id"] != ib["id"]
    assert h.alerts("INSUFFICIENT_BID")[-1]["params"]["last_bid"] == "1D"


def test_27b4_replacement_not_accepted_then_replaced_legally() -> None:
    h = auction(Rules.L2017, "C:N:1S C:E:1H C:E:1D")
    ib = h.alerts("INSUFFICIENT_BID")[0]
    h.rule("reject", alert=ib["id"])
    h.run("C:E:2H")                          # lowest sufficient in the original denomination
    final = h.final_alerts()[ib["id"]]
    assert final["law"] == "27B1a" and final["detail"] == "lowest_sufficient"
    assert calls(h)[-1] == ["E", "2H"]


def test_2007_has_no_27b4_second_insufficient_bid_is_struck() -> None:
    h = auction(Rules.L2007, "C:N:1S C:E:1H C:E:1D")
    ib = h.final_alerts()[h.alerts("INSUFFICIENT_BID")[0]["id"]]
    assert ib["law"] == "27" and ib["params"]["invalid_replacement"] == "1D"
    h.run("C:S:P")                           # S calls: the original 1H is accepted (27A1)
    assert calls(h) == [["N", "1S"], ["E", "1H"], ["S", "Pass"]]
