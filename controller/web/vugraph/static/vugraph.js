// The vugraph page: no build step, no library. Data from /api/*, changes from /events (SSE).
"use strict";

const L = {
  en: { title: "Vugraph", tables: "Tables", table: "Table", board: "Board", round: "Round",
        status: "Status", playing: "playing", complete: "complete", none: "Nothing released yet.",
        auction: "Auction", play: "Play", trick: "Trick", result: "Result", irregularities: "Irregularities",
        dealer: "Dealer", vul: "Vul", contract: "Contract", by: "by", tricks: "tricks",
        score: "Score NS", passed: "Passed out", first: "First", prev: "Previous", next: "Next", last: "Last",
        hidden: "The hands are shown once the board is released at every table.",
        results: "Results across tables", frequency: "Frequency", count: "Count", mp: "MP NS",
        pct: "% NS", imps: "IMPs NS", dd: "Double dummy", par: "Par", ddAbsent: "Double-dummy analysis is not installed (pip install bridge-table[dd]).",
        claim: "Claim", boards: "Boards", released: "Released boards", ns: "NS", ew: "EW",
        seats: { N: "North", E: "East", S: "South", W: "West" }, now: "Now", session: "Session",
        ranking: "Ranking", pair: "Pair", name: "Name", lead: "Lead", ddLine: "Double dummy: declarer",
        tricksSoFar: "Tricks", keys: "Keys: ← → trick by trick, Home / End", allBoards: "results" },
  vi: { title: "Vugraph", tables: "Các bàn", table: "Bàn", board: "Ván", round: "Vòng",
        status: "Trạng thái", playing: "đang chơi", complete: "đã xong", none: "Chưa có gì được công bố.",
        auction: "Đấu thầu", play: "Đánh bài", trick: "Nước", result: "Kết quả", irregularities: "Sai phạm",
        dealer: "Chia bài", vul: "Vul", contract: "Hợp đồng", by: "bởi", tricks: "nước",
        score: "Điểm NS", passed: "Bỏ bài", first: "Đầu", prev: "Trước", next: "Sau", last: "Cuối",
        hidden: "Bài của bốn tay được hiện khi ván đã xong ở mọi bàn.",
        results: "Kết quả các bàn", frequency: "Tần suất", count: "Số lần", mp: "MP NS",
        pct: "% NS", imps: "IMP NS", dd: "Phân tích hai tay", par: "Par", ddAbsent: "Chưa cài phân tích hai tay (pip install bridge-table[dd]).",
        claim: "Tuyên bố", boards: "Các ván", released: "Các ván đã công bố", ns: "NS", ew: "EW",
        seats: { N: "Bắc", E: "Đông", S: "Nam", W: "Tây" }, allBoards: "kết quả", now: "Đang chơi",
        session: "Buổi", ranking: "Xếp hạng", pair: "Đôi", name: "Tên", lead: "Dẫn đầu",
        ddLine: "Hai tay: bên cầm cái", tricksSoFar: "Nước", keys: "Phím: ← → từng nước, Home / End" },
  zh: { title: "实况转播", tables: "牌桌", table: "桌", board: "牌", round: "轮",
        status: "状态", playing: "进行中", complete: "已完成", none: "尚无公开内容。",
        auction: "叫牌", play: "打牌", trick: "墩", result: "结果", irregularities: "违规",
        dealer: "发牌", vul: "局况", contract: "定约", by: "庄家", tricks: "墩",
        score: "南北得分", passed: "全部派司", first: "第一", prev: "上一", next: "下一", last: "最后",
        hidden: "各桌打完此牌后才显示四家牌。",
        results: "各桌结果", frequency: "频率", count: "次数", mp: "南北比赛分",
        pct: "南北%", imps: "南北IMP", dd: "双明手分析", par: "标准分", ddAbsent: "未安装双明手分析（pip install bridge-table[dd]）。",
        claim: "摊牌", boards: "牌", released: "已公开的牌", ns: "南北", ew: "东西",
        seats: { N: "北", E: "东", S: "南", W: "西" }, allBoards: "结果", now: "正在打",
        session: "场次", ranking: "排名", pair: "对", name: "姓名", lead: "首攻",
        ddLine: "双明手：庄家方", tricksSoFar: "墩数", keys: "按键：← → 逐墩，Home / End" },
};
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const ORDER = "NESW";
const params = new URLSearchParams(location.search);
let lang = params.get("lang") || localStorage.getItem("vugraph-lang") || "en";
if (!L[lang]) lang = "en";
const T = (k) => L[lang][k] || L.en[k] || k;
let step = null;          // trick shown in the step-through (null: follow live)
let shownKey = null;
// one session at a time: the relay's current one unless the page asks for another
let session = params.get("session") || "";
const q = () => (session ? `?session=${encodeURIComponent(session)}` : "");

// -- what comes from the broker is data, never markup: every node is built with
// createElement and text nodes (as the console builds its pages); a field that is not
// what the wire contract says shows as missing, and never stops the page from drawing
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const text = (v) => (typeof v === "string" || (typeof v === "number" && isFinite(v)) ? String(v).replace(BIDI, "") : "");
const num = (v) => (typeof v === "number" && isFinite(v) ? v : null);
const arr = (v) => (Array.isArray(v) ? v : []);
const obj = (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : {});
const seatOf = (s) => (typeof s === "string" && s.length === 1 && ORDER.includes(s) ? s : null);
const isCard = (c) => typeof c === "string" && /^[SHDC][2-9TJQKA]$/.test(c);
const seatName = (s) => (seatOf(s) ? L[lang].seats[s] : "");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false || c === "") continue;
    node.append(c instanceof Node ? c : document.createTextNode(text(c)));
  }
  return node;
}
const frag = (...children) => { const f = document.createDocumentFragment(); f.append(...el("span", {}, ...children).childNodes); return f; };
const join = (items, sep) => items.flatMap((x, i) => (i ? [sep, x] : [x]));
function show(...children) { document.getElementById("main").replaceChildren(...children.flat().filter((c) => c)); }

function suitNode(s) { return SUITS[s] ? el("span", { class: s === "H" || s === "D" ? "red" : null }, SUITS[s]) : ""; }
function cardNode(c) { return isCard(c) ? frag(suitNode(c[0]), c[1] === "T" ? "10" : c[1]) : ""; }
function callNode(c) {
  if (typeof c !== "string") return "";
  if (c === "Pass") return lang === "zh" ? "派司" : "Pass";
  if (c === "X" || c === "XX") return c;
  if (!/^[1-7](NT|[SHDC])$/.test(c)) return "";
  const den = c.slice(1);
  return frag(c[0], den === "NT" ? "NT" : suitNode(den));
}
function contractNode(r) {
  r = obj(r);
  if (r.contract === "Pass") return T("passed");
  const m = typeof r.contract === "string" ? r.contract.match(/^([1-7])(NT|[SHDC])(X{0,2})$/) : null;
  if (!m) return "";
  return frag(m[1], m[2] === "NT" ? "NT" : suitNode(m[2]), m[3], " ", T("by"), " ", seatName(r.declarer));
}
function hands(deal) {
  if (typeof deal !== "string" || !/^[NESW]:[AKQJT2-9.\- ]*$/.test(deal)) return null;
  const [first, rest] = deal.split(":");
  const out = {}; const parts = rest.trim().split(/\s+/);
  const i0 = ORDER.indexOf(first);
  parts.slice(0, 4).forEach((h, k) => {
    const seat = ORDER[(i0 + k) % 4];
    const suits = h.split(".");
    out[seat] = {};
    ["S", "H", "D", "C"].forEach((s, j) => { out[seat][s] = (suits[j] || "").replace("-", ""); });
  });
  return out;
}
// the cards of the play that are cards at seats (a malformed entry is left out)
const playOf = (view) => arr(obj(view).cards).filter((x) => Array.isArray(x) && seatOf(x[0]) && isCard(x[1]));
function tricksOf(cards, contract) {
  const trump = typeof contract === "string" && /^\d[SHDC]/.test(contract) ? contract[1] : null;
  const rank = "23456789TJQKA";
  const out = [];
  for (let i = 0; i < cards.length; i += 4) {
    const t = cards.slice(i, i + 4);
    let win = null;
    if (t.length === 4) {
      let best = t[0];
      for (const x of t.slice(1)) {
        const [, bc] = best, [, xc] = x;
        if (xc[0] === bc[0] ? rank.indexOf(xc[1]) > rank.indexOf(bc[1]) : xc[0] === trump) best = x;
      }
      win = best[0];
    }
    out.push({ cards: t, winner: win });
  }
  return out;
}

async function getJSON(url) { const r = await fetch(url); return r.json(); }
const link = (href, ...children) => el("a", { href }, ...children);
const tableLink = (t, b) => `#/table/${encodeURIComponent(text(t))}` + (b != null ? `/${encodeURIComponent(text(b))}` : "");
const boardLink = (b) => `#/board/${encodeURIComponent(text(b))}`;
const list = (id, heads, rows) => el("div", { class: "scroll" }, el("table", { class: "list", id },
  el("thead", {}, el("tr", {}, heads.map((h) => el("th", {}, h)))), el("tbody", {}, rows)));
const none = (id) => el("p", { class: "muted", id }, T("none"));

function setHeader(state) {
  state = obj(state);
  const s = obj(state.session);
  document.getElementById("event").textContent = text(s.event);
  const pick = document.getElementById("session");
  const sessions = arr(state.sessions).map(text).filter((x) => x);
  pick.replaceChildren(...sessions.map((x) => el("option", { value: x }, x)));
  pick.value = text(s.session);
  pick.hidden = sessions.length === 0;
  const c = obj(state.commentary);
  const bar = document.getElementById("commentary");
  bar.textContent = text(c.text);
  bar.hidden = !text(c.text);
  const dot = document.getElementById("live");
  dot.className = "dot" + (state.connected ? " on" : "");
  document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = T(e.dataset.i18n); });
  document.documentElement.lang = lang;
}

function nowNode(n) {
  // what a table plays now: the board, and its contract once the auction is over
  n = obj(n);
  if (num(n.board) === null) return "";
  const c = contractNode({ contract: n.contract, declarer: n.declarer });
  return frag(T("board"), " ", n.board, c ? [" · ", c] : "");
}

function resultNode(r) {
  r = obj(r);
  const c = contractNode(r);
  return frag(c, r.contract !== "Pass" && num(r.tricks) !== null ? [" ", r.tricks, " ", T("tricks")] : "");
}

async function renderHome() {
  const state = obj(await getJSON("/api/state" + q()));
  setHeader(state);
  const tables = arr(state.tables).map(obj);
  const rows = tables.map((t) => {
    const s = obj(t.snapshot);
    const round = num(s.round) !== null ? el("span", { class: "muted" }, ` (${T("round")} ${s.round})`) : "";
    return el("tr", { "data-table": text(t.table) },
      el("td", {}, link(tableLink(t.table), T("table"), " ", t.table)),
      el("td", { class: "now" }, nowNode(t.now)),
      el("td", {}, t.snapshot ? text(s.board) || "–" : "–", round ? [" ", round] : ""),
      el("td", {}, t.snapshot ? resultNode(s.result) : ""),
      el("td", {}, join(arr(t.boards).filter((b) => num(b) !== null).map((b) => link(tableLink(t.table, b), b)), " ")));
  });
  const boards = arr(state.boards).filter((b) => num(b) !== null).map((b) => link(boardLink(b), T("board"), " ", b));
  const rank = arr(state.ranking).map(obj).map((r) => el("tr", {},
    el("td", {}, text(r.field) ? `${text(r.field)} ${text(r.rank)}` : text(r.rank)), el("td", {}, r.pair),
    el("td", {}, r.name), el("td", {}, r.pct), el("td", {}, r.boards)));
  show(
    el("div", { class: "panel" }, el("h2", {}, T("tables")),
      tables.length ? list("tables", [T("table"), T("now"), T("board"), T("result"), T("released")], rows) : none(null)),
    el("div", { class: "panel" }, el("h2", {}, T("ranking")),
      rank.length ? list("ranking", ["#", T("pair"), T("name"), "%", T("boards")], rank) : none("ranking-none")),
    el("div", { class: "panel" }, el("h2", {}, T("results")),
      el("p", { id: "boards" }, boards.length ? join(boards, " · ") : el("span", { class: "muted" }, T("none")))));
}

// a pair's two players, each at their own seat (as the live PBN and LIN files): "Ann Lee -
// Bo Tran" as NS is North Ann Lee, South Bo Tran; a name that is not two players sits at
// the first seat (North, East)
function playerAt(name, i) {
  name = text(name);
  for (const sep of [" - ", " & ", " / "]) {
    const parts = name.split(sep).map((x) => x.trim());
    if (parts.length === 2 && parts[0] && parts[1]) return parts[i];
  }
  return i === 0 ? name : "";
}

function handNode(seat, h, gone, view, turn) {
  const side = seat === "N" || seat === "S" ? "ns" : "ew";
  const players = obj(view.players);
  const who2 = players[side] ? playerAt(players[side], seat === "N" || seat === "E" ? 0 : 1) : "";
  let body = [];
  if (h) {
    body = ["S", "H", "D", "C"].map((s) => {
      const cards = h[s].split("").map((r) => (gone.has(s + r) ? el("span", { class: "gone" }, r === "T" ? "10" : r) : (r === "T" ? "10" : r)));
      return el("div", {}, suitNode(s), " ", cards.length ? join(cards, " ") : "—");
    });
  } else {
    // hands not released yet: the cards this seat has played so far
    const mine = playOf(view).filter(([x, c]) => x === seat && gone.has(c)).map(([, c]) => cardNode(c));
    body = mine.length ? [el("div", { class: "played" }, join(mine, " "))] : [];
  }
  return el("div", { class: `hand seat-${seat}${turn ? " turn" : ""}`, id: `hand-${seat}` },
    el("div", { class: "who" }, L[lang].seats[seat]), who2 ? el("div", { class: "muted" }, who2) : "", body);
}

function irrText(i) { const t = obj(i.text); return text(t[lang]) || text(t.en); }

function renderBoardView(view, tableId) {
  view = obj(view);
  const result = view.result ? obj(view.result) : null;
  const play = playOf(view);
  const tricks = tricksOf(play, result && result.contract);
  const n = tricks.length;
  const key = `${text(tableId)}/${text(view.board)}`;
  // a finished board opens on the whole deal; a board in play follows the play
  if (shownKey !== key) { shownKey = key; step = view.status === "complete" ? 0 : null; }
  const k = step === null ? n : Math.min(step, n);
  const gone = new Set();
  tricks.slice(0, k).forEach((t) => t.cards.forEach(([, c]) => gone.add(c)));
  const cur = k > 0 ? tricks[k - 1] : null;
  const h = hands(view.deal);
  const felt = cur ? cur.cards.map(([s, c]) => el("span", { class: `c ${s}` }, cardNode(c))) :
    [el("div", { class: "info" }, T("board"), " ", view.board, el("br"), T("dealer"), " ", seatName(view.dealer), el("br"), T("vul"), " ", view.vul)];
  const diagram = [el("div", { class: "diagram", id: "diagram" },
    ORDER.split("").map((s) => handNode(s, h ? h[s] : null, gone, view, cur && cur.winner === s)),
    el("div", { class: "table-felt", id: "felt" }, felt)),
  h ? "" : el("p", { class: "muted", id: "hidden" }, T("hidden"))];
  // auction: columns W N E S, first call under the dealer
  const cols = ["W", "N", "E", "S"];
  const cells = [];
  for (let i = 0; i < cols.indexOf(seatOf(view.dealer) || "W"); i++) cells.push(el("td"));
  const irrs = Object.fromEntries(arr(view.irregularities).map(obj).map((i) => [i.id, i]));
  arr(view.calls).filter(Array.isArray).forEach(([, call, irr]) => {
    const i = irr != null && Object.prototype.hasOwnProperty.call(irrs, irr) ? irrs[irr] : null;
    cells.push(el("td", { class: i ? "irr" : null, title: i ? irrText(i) || text(i.code) : null }, callNode(call), i ? "*" : ""));
  });
  const rows = [];
  for (let i = 0; i < cells.length; i += 4) rows.push(el("tr", {}, cells.slice(i, i + 4)));
  const auction = el("table", { class: "auction", id: "auction" },
    el("thead", {}, el("tr", {}, cols.map((c) => el("th", {}, L[lang].seats[c])))), el("tbody", {}, rows));
  // per card, double dummy: declarer's tricks with best play after each card (a card
  // that changes it is marked)
  const trace = traces[`${session}|${key}|${play.length}`];
  const ddAfter = (i) => (trace && trace.available && num(arr(trace.tricks)[i]) !== null ? trace.tricks[i] : null);
  const ddCell = (i) => {
    const v = ddAfter(i), before = ddAfter(i - 1);
    return v == null ? "" : el("sub", { class: `dd${before != null && before !== v ? " swing" : ""}` }, v);
  };
  const trickRows = tricks.map((t, i) => el("tr", { class: i === k - 1 ? "cur" : null }, el("td", {}, i + 1),
    t.cards.map(([s, c], j) => el("td", {}, s, " ", cardNode(c), ddCell(4 * i + j + 1))),
    el("td", {}, t.winner ? "→ " + t.winner : "")));
  const won = { NS: 0, EW: 0 };
  tricks.slice(0, k).forEach((t) => { if (t.winner) won["NS".includes(t.winner) ? "NS" : "EW"] += 1; });
  const ddNow = ddAfter(Math.min(4 * k, play.length));
  const running = el("div", { id: "running" }, `${T("tricksSoFar")}: ${T("ns")} ${won.NS} · ${T("ew")} ${won.EW}`,
    ddNow != null ? [" · ", el("span", { id: "dd-now" }, `${T("ddLine")} ${ddNow}`)] : "");
  const score = num(result && result.score_ns);
  const resultPart = result ? [el("div", { class: "result", id: "result" }, contractNode(result),
    result.contract !== "Pass" && num(result.tricks) !== null ? [" · ", result.tricks, " ", T("tricks")] : "",
    score !== null ? [" · ", T("score"), " ", (score > 0 ? "+" : "") + score] : ""),
  num(obj(view.claim).tricks) !== null ? el("div", { class: "muted" }, `${T("claim")}: ${view.claim.tricks} ${T("tricks")}`) : ""] :
    [el("div", { class: "muted" }, T("playing"))];
  const irr = arr(view.irregularities).map(obj).map((i) => el("li", {}, el("b", {}, i.code), ` (Law ${text(i.law)}) `, irrText(i), " ",
    el("span", { class: "muted" }, i.status)));
  const title = [T("table"), " ", tableId, " · ", T("board"), " ", view.board,
    num(view.round) !== null ? [" · ", T("round"), " ", view.round] : "",
    text(view.ns) ? [" · ", T("ns"), " ", view.ns, " – ", T("ew"), " ", view.ew] : ""];
  // the step buttons sit under the diagram (on a phone too)
  const button = (id, label, glyph) => el("button", { id, "aria-label": T(label) }, glyph);
  return el("div", { class: "grid" },
    el("div", {},
      el("div", { class: "panel" }, el("h2", { id: "board-title" }, title), diagram,
        el("div", { class: "steps" }, button("first", "first", "|◀"), button("prev", "prev", "◀"),
          el("span", { id: "step" }, `${T("trick")} ${k} / ${n}`), button("next", "next", "▶"), button("last", "last", "▶|")),
        running, el("p", { class: "muted keys" }, T("keys"))),
      el("div", { class: "panel" }, el("h2", {}, T("result")), resultPart, " ",
        el("p", {}, link(boardLink(view.board), T("results"))))),
    el("div", {},
      el("div", { class: "panel" }, el("h2", {}, T("auction")), auction),
      el("div", { class: "panel" }, el("h2", {}, T("play")),
        el("div", { class: "scroll" }, el("table", { class: "tricks", id: "tricks" }, trickRows))),
      irr.length ? el("div", { class: "panel" }, el("h2", {}, T("irregularities")), el("ul", { class: "irregularities", id: "irregularities" }, irr)) : ""));
}

let tableCache = null;
const traces = {};          // session|table/board|cards -> per-card double dummy
let keys = null;            // the step-through's keyboard actions on a table page
async function renderTable(tableId, boardNo) {
  const [data, state] = await Promise.all([getJSON(`/api/table/${encodeURIComponent(tableId)}` + q()), getJSON("/api/state" + q())]);
  setHeader(state);
  tableCache = obj(data);
  draw(tableId, boardNo);
}
function draw(tableId, boardNo) {
  const data = tableCache;
  const boards = arr(data.boards).map(obj);
  let view = data.snapshot ? obj(data.snapshot) : null;
  if (boardNo) view = boards.find((b) => text(b.board) === String(boardNo)) || view;
  const nav = join(boards.filter((b) => num(b.board) !== null).map((b) => link(tableLink(tableId, b.board), b.board)), " ");
  const nowData = data.now ? obj(data.now) : null;
  const now = nowData && (!view || nowData.board !== view.board) ? el("p", { id: "now" }, `${T("now")}: `, nowNode(nowData)) : "";
  show(view ? [now, el("p", {}, `${T("boards")}: `, nav), renderBoardView(view, tableId)] : [now, none(null)]);
  const n = tricksOf(view ? playOf(view) : [], null).length;
  const cur = step === null ? n : step;
  const go = (s) => { step = Math.max(0, Math.min(n, s)); if (step === n && view && view.status !== "complete") step = null; draw(tableId, boardNo); };
  keys = { ArrowLeft: () => go(cur - 1), ArrowRight: () => go(cur + 1), Home: () => go(0), End: () => go(n) };
  const b = (id, f) => { const e = document.getElementById(id); if (e) e.onclick = f; };
  b("first", keys.Home); b("prev", keys.ArrowLeft); b("next", keys.ArrowRight); b("last", keys.End);
  const res = view ? obj(view.result) : {};
  if (view && hands(view.deal) && typeof res.contract === "string" && res.contract !== "Pass" && num(view.board) !== null) {
    const tkey = `${session}|${tableId}/${view.board}|${playOf(view).length}`;
    if (!(tkey in traces)) {
      traces[tkey] = null;
      getJSON(`/api/dd/${encodeURIComponent(tableId)}/${view.board}` + q()).then((t) => {
        traces[tkey] = obj(t);
        if (location.hash.startsWith(`#/table/${encodeURIComponent(tableId)}`)) draw(tableId, boardNo);
      }).catch(() => {});
    }
  }
}
document.addEventListener("keydown", (e) => {
  if (!keys || !location.hash.startsWith("#/table/") || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.target && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
  const f = keys[e.key];
  if (f) { e.preventDefault(); f(); }
});

async function renderBoard(boardNo) {
  const [state, raw] = await Promise.all([getJSON("/api/state" + q()), getJSON(`/api/board/${encodeURIComponent(boardNo)}` + q())]);
  setHeader(state);
  const data = obj(raw);
  const pairCell = (r, side) => el("td", {}, r[side], text(obj(r.players)[side]) ? [" ", el("span", { class: "muted" }, obj(r.players)[side])] : "");
  const rows = arr(data.results).map(obj).map((r) => el("tr", {}, el("td", {}, r.table), pairCell(r, "ns"), pairCell(r, "ew"),
    el("td", {}, contractNode(r)), el("td", {}, cardNode(r.lead)), el("td", {}, r.contract === "Pass" ? "" : r.tricks),
    el("td", {}, r.score_ns), el("td", {}, r.mp_ns), el("td", {}, r.pct_ns)));
  const freq = arr(data.frequency).map(obj).map((f) => el("tr", {}, el("td", {}, contractNode(f)), el("td", {}, f.score_ns), el("td", {}, f.count)));
  let dd = el("p", { class: "muted", id: "dd-absent" }, T("ddAbsent"));
  const solved = obj(data.dd);
  if (solved.available) {
    const den = ["NT", "S", "H", "D", "C"];
    const par = num(solved.par_score_ns);
    dd = [el("table", { class: "dd", id: "dd" }, el("tr", {}, el("th"), den.map((d) => el("th", {}, d === "NT" ? "NT" : suitNode(d)))),
      ORDER.split("").map((s) => el("tr", {}, el("th", {}, L[lang].seats[s]),
        den.map((d) => { const t = num(obj(obj(solved.tricks)[d])[s]); return el("td", {}, t !== null && t >= 7 ? t - 6 : "–"); })))),
    el("p", {}, `${T("par")}: `, arr(solved.par).map(text).join(", "), par !== null ? ` (${par > 0 ? "+" : ""}${par})` : "")];
  } else if (!data.deal) { dd = ""; }
  show(el("div", { class: "panel" }, el("h2", {}, T("board"), " ", boardNo, " · ", T("results")),
    list("results", [T("table"), T("ns"), T("ew"), T("contract"), T("lead"), T("tricks"), T("score"), T("mp"), T("pct")], rows),
    num(data.imps_ns) !== null ? el("p", { id: "imps" }, `${T("imps")}: ${data.imps_ns}`) : ""),
  el("div", { class: "panel" }, el("h2", {}, T("frequency")), list("frequency", [T("contract"), T("score"), T("count")], freq)),
  el("div", { class: "panel" }, el("h2", {}, T("dd")), el("div", { class: "scroll" }, dd)));
}

let pending = null;
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map((x) => { try { return decodeURIComponent(x); } catch { return ""; } });
  const shown = parts[0] === "table" && parts[1] ? renderTable(parts[1], parts[2]) :
    parts[0] === "board" && parts[1] ? renderBoard(parts[1]) : renderHome();
  // a page that could not be drawn stays as it was: the next change draws it again
  return shown.catch((e) => console.warn("vugraph: not drawn:", e));
}
function refresh() { if (pending) return; pending = setTimeout(() => { pending = null; route(); }, 100); }

document.getElementById("lang").value = lang;
document.getElementById("lang").onchange = (e) => { lang = e.target.value; localStorage.setItem("vugraph-lang", lang); route(); };
document.getElementById("session").onchange = (e) => {
  // another session: its own tables, boards and ranking (never mixed with this one)
  session = e.target.value;
  const u = new URL(location.href);
  u.searchParams.set("session", session);
  history.replaceState(null, "", u);
  shownKey = null; step = null; route();
};
// a page changed: the step-through starts again (a finished board opens on the deal,
// a board in play follows it); live updates go on on every page, whatever was stepped
window.addEventListener("hashchange", () => { shownKey = null; step = null; route(); });
const es = new EventSource("/events");
es.onmessage = () => refresh();
route();
