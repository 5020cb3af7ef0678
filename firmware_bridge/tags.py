"""Tag registry: which RFID tag is which card (of which deck), bid card, marker or board wallet.

Registry files are TOML (see ``hw_configs/tags-*.toml``)::

    version = 1
    [boards]                      # board wallets: board number -> UID
    "1" = "04D10001000000"
    [decks."1"]                   # a deck (here: the cards of board 1's wallet): card -> UID
    SA = "04C1000133000000"
    [bidboxes.N]                  # a bidding box: call or marker -> UID, or a list of UIDs
    "1C" = "04B10000000000"       #   when the box holds several copies (Pass, X, XX)
    Pass = ["04B1002300000", "04B10023010000"]
    STOP = "04A10000000000"

``bridge-table tags enroll|enroll-bidbox|enroll-boards|list|check``: see
``firmware_bridge/cli_tags.py``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.laws import CALL_NAMES, CARD_NAMES, MARKER_NAMES, SEAT_NAMES
from controller.tomlfile import TomlFileError, load_toml
from firmware_bridge.protocol import normalise_uid
from firmware_bridge.taginfo import NULL_REGISTRY, NullRegistry, TagInfo, TagKind, TagLookup

__all__ = [
    "TagInfo", "TagKind", "TagLookup", "NullRegistry", "NULL_REGISTRY", "TagRegistry",
    "RegistryError", "RegistryFile", "CARD_ORDER",
    "CALL_ORDER", "MARKERS", "Enrollment", "EnrollError", "check_files",
    "enrollment_base", "sim_registry", "summary_lines",
]

# The vocabulary is the Laws core's (controller.laws), not spelled again here.
#: Enrolment order of a deck: SA, SK, ..., S2, HA, ..., C2.
CARD_ORDER: tuple[str, ...] = CARD_NAMES
#: Calls as the wire contract writes them: 1C .. 7NT, Pass, X, XX.
CALL_ORDER: tuple[str, ...] = CALL_NAMES
MARKERS: tuple[str, ...] = MARKER_NAMES
MAX_BOARD = 999


class RegistryError(Exception):
    """A registry file that cannot be used: unreadable, not TOML, wrong shapes, conflicts."""


class EnrollError(RegistryError):
    """Enrolment cannot go on (reader gone, name already taken, ...)."""


@dataclass
class RegistryFile:
    """One registry file's content, editable (enrolment) and writable back atomically."""

    path: Path
    boards: dict[int, str] = field(default_factory=dict)
    decks: dict[str, dict[str, str]] = field(default_factory=dict)
    bidboxes: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path, *, missing_ok: bool = False) -> RegistryFile:
        """Parse one file; RegistryError with the file name and the problem if it is broken."""
        try:
            data = load_toml(path)
        except TomlFileError as error:
            if error.problem.reason == "missing":
                if missing_ok:
                    return cls(path)
                raise RegistryError(f"{path}: no such registry file") from None
            raise RegistryError(str(error)) from None
        return cls._from_data(path, data)

    @classmethod
    def _from_data(cls, path: Path, data: dict[str, Any]) -> RegistryFile:
        problems: list[str] = []
        if data.get("version", 1) != 1:
            problems.append(f"version {data.get('version')!r} (this program reads version 1)")
        unknown = set(data) - {"version", "boards", "decks", "bidboxes"}
        if unknown:
            problems.append(f"unknown sections {sorted(unknown)}")
        result = cls(path)

        def uid_of(where: str, value: Any) -> str | None:
            uid = normalise_uid(value) if isinstance(value, str) else None
            if uid is None:
                problems.append(f"{where}: {value!r} is not a UID (8..20 hex digits)")
            return uid

        boards = data.get("boards", {})
        if not isinstance(boards, dict):
            problems.append("[boards] must be a table")
            boards = {}
        for key, value in boards.items():
            if not (key.isdigit() and 1 <= int(key) <= MAX_BOARD):
                problems.append(f"boards.{key}: not a board number 1..{MAX_BOARD}")
                continue
            uid = uid_of(f"boards.{key}", value)
            if uid:
                result.boards[int(key)] = uid
        decks = data.get("decks", {})
        if not isinstance(decks, dict):
            problems.append("[decks] must be a table of decks")
            decks = {}
        for name, cards in decks.items():
            if not isinstance(cards, dict):
                problems.append(f"decks.{name}: must be a table card -> UID")
                continue
            deck: dict[str, str] = {}
            for card, value in cards.items():
                if card not in CARD_ORDER:
                    problems.append(f"decks.{name}.{card}: not a card (SA .. C2)")
                    continue
                uid = uid_of(f"decks.{name}.{card}", value)
                if uid:
                    deck[card] = uid
            result.decks[str(name)] = deck
        boxes = data.get("bidboxes", {})
        if not isinstance(boxes, dict):
            problems.append("[bidboxes] must be a table of boxes")
            boxes = {}
        for name, calls in boxes.items():
            if not isinstance(calls, dict):
                problems.append(f"bidboxes.{name}: must be a table call -> UID(s)")
                continue
            box: dict[str, list[str]] = {}
            for call, value in calls.items():
                if call not in CALL_ORDER and call not in MARKERS:
                    problems.append(f"bidboxes.{name}.{call}: not a call (1C..7NT, Pass, X, XX)"
                                    " or marker (STOP, ALERT)")
                    continue
                values = value if isinstance(value, list) else [value]
                uids = [uid_of(f"bidboxes.{name}.{call}", v) for v in values]
                box[call] = [u for u in uids if u]
            result.bidboxes[str(name)] = box
        if problems:
            raise RegistryError(f"{path}: " + "; ".join(problems))
        return result

    def entries(self) -> Iterable[TagInfo]:
        for number, uid in sorted(self.boards.items()):
            yield TagInfo(uid, "board", board=number)
        for name, deck in self.decks.items():
            for card, uid in deck.items():
                yield TagInfo(uid, "card", card=card, deck=name)
        for name, box in self.bidboxes.items():
            for call, uids in box.items():
                for uid in uids:
                    if call in MARKERS:
                        yield TagInfo(uid, "marker", marker=call, box=name)
                    else:
                        yield TagInfo(uid, "call", call=call, box=name)

    def to_toml(self) -> str:
        lines = ["# bridge-table tag registry (bridge-table tags ...)", "version = 1", ""]
        if self.boards:
            lines.append("[boards]")
            lines += [f'"{n}" = "{uid}"' for n, uid in sorted(self.boards.items())]
            lines.append("")
        for name, deck in self.decks.items():
            lines.append(f"[decks.{_toml_key(name)}]")
            lines += [f'{card} = "{deck[card]}"' for card in CARD_ORDER if card in deck]
            lines.append("")
        for name, box in self.bidboxes.items():
            lines.append(f"[bidboxes.{_toml_key(name)}]")
            for call in (*CALL_ORDER, *MARKERS):
                if call not in box:
                    continue
                uids = box[call]
                value = (f'"{uids[0]}"' if len(uids) == 1
                         else "[" + ", ".join(f'"{u}"' for u in uids) + "]")
                lines.append(f"{_toml_key(call)} = {value}")
            lines.append("")
        return "\n".join(lines)

    def write(self) -> None:
        """Write atomically: a temporary file in the same directory, fsync, rename."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = self.to_toml()
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fp:
                fp.write(text)
                fp.flush()
                os.fsync(fp.fileno())
            # mkstemp makes the file private (0600); a registry is read by the bridge's
            # service user too, so keep the mode of the file it replaces, or 0644
            try:
                mode = self.path.stat().st_mode & 0o777
            except FileNotFoundError:
                mode = 0o644
            os.chmod(tmp, mode)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def _toml_key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


class TagRegistry:
    """All tags of one or more registry files, looked up by UID (and back, for the simulator)."""

    def __init__(self, entries: Iterable[TagInfo] = (), *, strict: bool = True) -> None:
        self._by_uid: dict[str, TagInfo] = {}
        self.conflicts: list[str] = []
        for info in entries:
            old = self._by_uid.get(info.uid)
            if old is not None and old != info:
                self.conflicts.append(f"UID {info.uid} is both {_describe(old)} and "
                                      f"{_describe(info)}")
                continue
            self._by_uid[info.uid] = info
        if strict and self.conflicts:
            raise RegistryError("conflicting registry entries: " + "; ".join(self.conflicts[:5])
                                + (" ..." if len(self.conflicts) > 5 else ""))
        self._cards = {(i.deck, i.card): i.uid for i in self._by_uid.values() if i.kind == "card"}
        self._boards = {i.board: i.uid for i in self._by_uid.values() if i.kind == "board"}
        self._calls: dict[tuple[str | None, str], list[str]] = {}
        for i in self._by_uid.values():
            name = i.call if i.kind == "call" else i.marker if i.kind == "marker" else None
            if name is not None:
                self._calls.setdefault((i.box, name), []).append(i.uid)
                self._calls.setdefault((None, name), []).append(i.uid)

    @classmethod
    def load(cls, paths: Sequence[Path], *, strict: bool = True) -> TagRegistry:
        """Read the files; RegistryError naming the file and the problem if one is broken, or
        (``strict``) if two entries give one UID two meanings."""
        entries: list[TagInfo] = []
        for path in paths:
            entries += RegistryFile.read(Path(path)).entries()
        return cls(entries, strict=strict)

    def __len__(self) -> int:
        return len(self._by_uid)

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and uid.upper() in self._by_uid

    def lookup(self, uid: str) -> TagInfo | None:
        """What this tag is, or None when no registry knows it (publish ``unknown: true``)."""
        return self._by_uid.get(uid.upper())

    def uid_for_card(self, deck: str, card: str) -> str | None:
        return self._cards.get((deck, card))

    def uid_for_call(self, call: str, box: str | None = None, copy: int = 0) -> str | None:
        """A bid card (or STOP/ALERT marker) of ``box`` (any box if None); ``copy`` picks
        among the box's copies of that card (the second Pass of a seat is another card)."""
        uids = self._calls.get((box, call), [])
        return uids[copy] if 0 <= copy < len(uids) else None

    def uid_for_board(self, board: int) -> str | None:
        return self._boards.get(board)

    def entries(self) -> list[TagInfo]:
        return list(self._by_uid.values())


def _describe(info: TagInfo) -> str:
    if info.kind == "card":
        return f"card {info.card} of deck {info.deck}"
    if info.kind == "board":
        return f"board wallet {info.board}"
    return f"{info.kind} {info.call or info.marker} of box {info.box}"


# --------------------------------------------------------------------------- the simulator's set

#: Copies of each card a simulated bidding box holds (bids: one each).
SIM_COPIES = {"Pass": 12, "X": 4, "XX": 4}
SIM_BOXES = SEAT_NAMES


def sim_registry(path: Path, boards: int = 36) -> RegistryFile:
    """The simulated table's tags: deterministic 7-byte UIDs that say what they are.

    * deck ``"n"`` (the cards of board n's wallet): ``04C1`` + board (4 hex) + card index in
      enrolment order SA=00 .. C2=33 (2 hex) + ``0000``;
    * bidding box of seat ``N|E|S|W``: ``04B1`` + box index + call index (1C=00 .. XX=25) + copy
      + ``0000``; its markers ``04A1`` + box index + marker index + ``000000``;
    * board wallet n: ``04D1`` + n (4 hex) + ``000000``.
    """
    reg = RegistryFile(path)
    for n in range(1, boards + 1):
        reg.boards[n] = f"04D1{n:04X}000000"
        reg.decks[str(n)] = {c: f"04C1{n:04X}{i:02X}0000" for i, c in enumerate(CARD_ORDER)}
    for b, name in enumerate(SIM_BOXES):
        box: dict[str, list[str]] = {}
        for i, call in enumerate(CALL_ORDER):
            box[call] = [f"04B1{b:02X}{i:02X}{k:02X}0000" for k in range(SIM_COPIES.get(call, 1))]
        for i, marker in enumerate(MARKERS):
            box[marker] = [f"04A1{b:02X}{i:02X}000000"]
        reg.bidboxes[name] = box
    return reg


# --------------------------------------------------------------------------- enrolment


ReadSource = AsyncIterator[Any]  # TagRead | ReaderHealth items, as a Reader yields them


@dataclass(frozen=True)
class EnrollStep:
    label: str   # what to put on the reader: "SQ", "Pass (copy 3)", "board 12"
    key: tuple[str, ...]  # where the UID goes


class Enrollment:
    """Read tags one by one into a registry file: a prompt per tag, progress ``12/52``,
    refusal of a tag read twice or already registered elsewhere; the file is written only
    when every tag is in (atomically), so an interrupted enrolment leaves it untouched."""

    def __init__(self, target: RegistryFile, steps: Sequence[EnrollStep],
                 known: TagRegistry, *, say: Callable[[str], None] = print) -> None:
        self.target = target
        self.steps = list(steps)
        self.known = known
        self.say = say
        self.uids: list[str] = []
        self.refused: list[str] = []

    @classmethod
    def deck(cls, target: RegistryFile, name: str, known: TagRegistry,
             **kw: Any) -> Enrollment:
        if name in target.decks:
            raise EnrollError(f"{target.path}: deck {name!r} is already registered")
        return cls(target, [EnrollStep(c, ("deck", name, c)) for c in CARD_ORDER], known, **kw)

    @classmethod
    def bidbox(cls, target: RegistryFile, name: str, known: TagRegistry,
               copies: dict[str, int] | None = None, **kw: Any) -> Enrollment:
        if name in target.bidboxes:
            raise EnrollError(f"{target.path}: bidding box {name!r} is already registered")
        copies = {"Pass": 8, "X": 2, "XX": 2} if copies is None else copies
        steps = []
        for call in (*CALL_ORDER, *MARKERS):
            n = copies.get(call, 1)
            for k in range(n):
                label = call if n == 1 else f"{call} (copy {k + 1} of {n})"
                steps.append(EnrollStep(label, ("box", name, call)))
        return cls(target, steps, known, **kw)

    @classmethod
    def boards(cls, target: RegistryFile, numbers: Sequence[int], known: TagRegistry,
               **kw: Any) -> Enrollment:
        taken = [n for n in numbers if n in target.boards]
        if taken:
            raise EnrollError(f"{target.path}: board wallets {taken} are already registered")
        return cls(target, [EnrollStep(f"board {n}", ("board", str(n))) for n in numbers],
                   known, **kw)

    async def run(self, reads: ReadSource) -> RegistryFile:
        """Consume tag reads until every step has its tag; then write the file."""
        total = len(self.steps)
        self._prompt()
        async for item in reads:
            if getattr(item, "action", None) != "present":
                if getattr(item, "kind", None) in ("disconnected", "heartbeat_lost"):
                    self.say(f"  reader: {item.kind} ({item.detail})")
                continue
            uid = item.uid
            problem = self._problem(uid)
            if problem:
                self.refused.append(uid)
                self.say(f"  REFUSED {uid}: {problem}. Put {self.steps[len(self.uids)].label} "
                         f"on the reader.")
                continue
            self.uids.append(uid)
            self.say(f"  {len(self.uids)}/{total} {self.steps[len(self.uids) - 1].label} = {uid}")
            if len(self.uids) == total:
                break
            self._prompt()
        if len(self.uids) < total:
            raise EnrollError(f"reader stopped after {len(self.uids)}/{total} tags; "
                              f"{self.target.path} left unchanged")
        self._apply()
        self.target.write()
        self.say(f"written {self.target.path}: {total} tags")
        return self.target

    async def run_on_reader(self, url: str, kind: str | None = None) -> RegistryFile:
        """:meth:`run` on the reads of the reader at ``url`` (``open_reader``)."""
        from firmware_bridge.readers import open_reader

        reader = open_reader("enroll", url, kind=kind)
        async with reader:
            return await self.run(aiter(reader))

    def _prompt(self) -> None:
        step = self.steps[len(self.uids)]
        self.say(f"[{len(self.uids) + 1}/{len(self.steps)}] put {step.label} on the reader")

    def _problem(self, uid: str) -> str | None:
        if uid in self.uids:
            step = self.steps[self.uids.index(uid)]
            return f"already read in this enrolment as {step.label}"
        info = self.known.lookup(uid)
        if info is not None:
            return f"already registered as {_describe(info)}"
        return None

    def _apply(self) -> None:
        for step, uid in zip(self.steps, self.uids, strict=True):
            if step.key[0] == "deck":
                self.target.decks.setdefault(step.key[1], {})[step.key[2]] = uid
            elif step.key[0] == "box":
                self.target.bidboxes.setdefault(step.key[1], {}).setdefault(
                    step.key[2], []).append(uid)
            else:
                self.target.boards[int(step.key[1])] = uid


# --------------------------------------------------------------------------- files


def enrollment_base(registry: Path, also: Sequence[Path]) -> tuple[RegistryFile, TagRegistry]:
    """The registry file an enrolment adds to (new when missing) and every tag already
    known, which it refuses: that file's and the ``also`` files'."""
    target = RegistryFile.read(registry, missing_ok=True)
    known = TagRegistry.load([f for f in also if f.resolve() != registry.resolve()],
                             strict=False)
    return target, TagRegistry([*known.entries(), *target.entries()], strict=False)


def summary_lines(files: Sequence[Path]) -> Iterator[str]:
    """What the registry files hold, a few lines a file (read one by one, as they come)."""
    for path in files:
        reg = RegistryFile.read(path)
        yield f"{path}:"
        if reg.boards:
            yield f"  board wallets: {len(reg.boards)} ({_ranges(sorted(reg.boards))})"
        for name, deck in reg.decks.items():
            yield f"  deck {name}: {len(deck)}/52 cards"
        for name, box in reg.bidboxes.items():
            yield f"  bidding box {name}: {sum(len(u) for u in box.values())} cards"


def _ranges(numbers: list[int]) -> str:
    parts: list[str] = []
    for n in numbers:
        if parts and parts[-1].split("-")[-1] == str(n - 1):
            parts[-1] = parts[-1].split("-")[0] + f"-{n}"
        else:
            parts.append(str(n))
    return ",".join(parts)


def check_files(files: Sequence[Path]) -> list[str]:
    """Every problem of these registry files together (empty: all good)."""
    problems: list[str] = []
    entries: list[TagInfo] = []
    for path in files:
        try:
            reg = RegistryFile.read(path)
        except RegistryError as error:
            problems.append(str(error))
            continue
        for name, deck in reg.decks.items():
            missing = [c for c in CARD_ORDER if c not in deck]
            if missing:
                problems.append(f"{path}: deck {name} lacks {len(missing)} card(s): "
                                f"{' '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}")
        for name, box in reg.bidboxes.items():
            missing = [c for c in (*CALL_ORDER, *MARKERS) if not box.get(c)]
            if missing:
                problems.append(f"{path}: bidding box {name} lacks {' '.join(missing[:8])}"
                                f"{' ...' if len(missing) > 8 else ''}")
        entries += reg.entries()
    problems += TagRegistry(entries, strict=False).conflicts
    return problems
