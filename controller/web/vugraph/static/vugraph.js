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

function esc(s) { return String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c])); }
function suitHtml(s) { if (!SUITS[s]) return esc(s); const red = s === "H" || s === "D"; return `<span class="${red ? "red" : ""}">${SUITS[s]}</span>`; }
function cardHtml(c) { c = String(c || ""); if (!/^[SHDC][2-9TJQKA]$/.test(c)) return esc(c); return suitHtml(c[0]) + (c[1] === "T" ? "10" : c[1]); }
function callHtml(c) {
  if (!c) return "";
  if (c === "Pass") return lang === "zh" ? "派司" : "Pass";
  if (c === "X" || c === "XX") return c;
  if (!/^[1-7](NT|[SHDC])$/.test(c)) return esc(c);
  const level = c[0], den = c.slice(1);
  return level + (den === "NT" ? "NT" : suitHtml(den));
}
function contractHtml(r) {
  if (!r || !r.contract) return "";
  if (r.contract === "Pass") return T("passed");
  const m = r.contract.match(/^(\d)(NT|[SHDC])(X{0,2})$/);
  const c = m ? m[1] + (m[2] === "NT" ? "NT" : suitHtml(m[2])) + m[3] : esc(r.contract);
  return `${c} ${T("by")} ${L[lang].seats[r.declarer] || ""}`;
}
function hands(deal) {
  if (!deal) return null;
  const [first, rest] = deal.split(":");
  const out = {}; const parts = rest.trim().split(/\s+/);
  const i0 = ORDER.indexOf(first);
  parts.forEach((h, k) => {
    const seat = ORDER[(i0 + k) % 4];
    const suits = h.split(".");
    out[seat] = {};
    ["S", "H", "D", "C"].forEach((s, j) => { out[seat][s] = (suits[j] || "").replace("-", ""); });
  });
  return out;
}
function tricksOf(cards, contract) {
  const trump = contract && /^\d[SHDC]/.test(contract) ? contract[1] : null;
  const rank = "23456789TJQKA";
  const out = [];
  for (let i = 0; i < cards.length; i += 4) {
    const t = cards.slice(i, i + 4);
    let win = null;
    if (t.length === 4) {
      let best = t[0];
      for (const x of t.slice(1)) {
        const [bs, bc] = best, [xs, xc] = x;
        if (xc[0] === bc[0] ? rank.indexOf(xc[1]) > rank.indexOf(bc[1]) : xc[0] === trump) best = x;
      }
      win = best[0];
    }
    out.push({ cards: t, winner: win });
  }
  return out;
}

async function getJSON(url) { const r = await fetch(url); return r.json(); }

function setHeader(state) {
  const s = state.session || {};
  document.getElementById("event").textContent = s.event || "";
  const pick = document.getElementById("session");
  const sessions = state.sessions || [];
  pick.innerHTML = sessions.map((x) => `<option value="${esc(x)}">${esc(x)}</option>`).join("");
  pick.value = s.session || "";
  pick.hidden = sessions.length === 0;
  const c = state.commentary;
  const bar = document.getElementById("commentary");
  bar.textContent = c && c.text ? c.text : "";
  bar.hidden = !(c && c.text);
  const dot = document.getElementById("live");
  dot.className = "dot" + (state.connected ? " on" : "");
  document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = T(e.dataset.i18n); });
  document.documentElement.lang = lang;
}

function nowHtml(n) {
  // what a table plays now: the board, and its contract once the auction is over
  if (!n || n.board == null) return "";
  const c = n.contract ? " · " + contractHtml({ contract: n.contract, declarer: n.declarer }) : "";
  return `${T("board")} ${esc(n.board)}${c}`;
}

async function renderHome() {
  const state = await getJSON("/api/state" + q());
  setHeader(state);
  const rows = state.tables.map((t) => {
    const s = t.snapshot;
    const res = s && s.result ? contractHtml(s.result) + (s.result.contract !== "Pass" ? ` ${esc(s.result.tricks)} ${T("tricks")}` : "") : "";
    return `<tr data-table="${esc(t.table)}"><td><a href="#/table/${encodeURIComponent(t.table)}">${T("table")} ${esc(t.table)}</a></td>
      <td class="now">${nowHtml(t.now)}</td>
      <td>${s ? esc(s.board) : "–"}${s && s.round ? ` <span class="muted">(${T("round")} ${esc(s.round)})</span>` : ""}</td>
      <td>${res}</td>
      <td>${t.boards.map((b) => `<a href="#/table/${encodeURIComponent(t.table)}/${b}">${b}</a>`).join(" ")}</td></tr>`;
  }).join("");
  const boards = state.boards.map((b) => `<a href="#/board/${b}">${T("board")} ${b}</a>`).join(" · ");
  const rank = (state.ranking || []).map((r) => `<tr><td>${esc(r.field ? `${r.field} ${r.rank}` : r.rank)}</td><td>${esc(r.pair)}</td><td>${esc(r.name || "")}</td><td>${esc(r.pct)}</td><td>${esc(r.boards)}</td></tr>`).join("");
  document.getElementById("main").innerHTML = `
    <div class="panel"><h2>${T("tables")}</h2>
    ${state.tables.length ? `<div class="scroll"><table class="list" id="tables"><thead><tr><th>${T("table")}</th><th>${T("now")}</th><th>${T("board")}</th><th>${T("result")}</th><th>${T("released")}</th></tr></thead><tbody>${rows}</tbody></table></div>` : `<p class="muted">${T("none")}</p>`}
    </div>
    <div class="panel"><h2>${T("ranking")}</h2>${rank ? `<div class="scroll"><table class="list" id="ranking"><thead><tr><th>#</th><th>${T("pair")}</th><th>${T("name")}</th><th>%</th><th>${T("boards")}</th></tr></thead><tbody>${rank}</tbody></table></div>` : `<p class="muted" id="ranking-none">${T("none")}</p>`}</div>
    <div class="panel"><h2>${T("results")}</h2><p id="boards">${boards || `<span class="muted">${T("none")}</span>`}</p></div>`;
}

// a pair's two players, each at their own seat (as the live PBN and LIN files): "Ann Lee -
// Bo Tran" as NS is North Ann Lee, South Bo Tran; a name that is not two players sits at
// the first seat (North, East)
function playerAt(name, i) {
  for (const sep of [" - ", " & ", " / "]) {
    const parts = String(name).split(sep).map((x) => x.trim());
    if (parts.length === 2 && parts[0] && parts[1]) return parts[i];
  }
  return i === 0 ? name : "";
}

function handHtml(seat, h, gone, view, turn) {
  const who = L[lang].seats[seat];
  const side = seat === "N" || seat === "S" ? "ns" : "ew";
  const who2 = view.players && view.players[side] ? playerAt(view.players[side], seat === "N" || seat === "E" ? 0 : 1) : "";
  const name = who2 ? `<div class="muted">${esc(who2)}</div>` : "";
  let body = "";
  if (h) {
    body = ["S", "H", "D", "C"].map((s) => {
      const cards = h[s].split("").map((r) => gone.has(s + r) ? `<span class="gone">${r === "T" ? "10" : r}</span>` : (r === "T" ? "10" : r)).join(" ");
      return `<div>${suitHtml(s)} ${cards || "—"}</div>`;
    }).join("");
  } else {
    // hands not released yet: the cards this seat has played so far
    const mine = (view.cards || []).filter(([x, c]) => x === seat && gone.has(c)).map(([, c]) => cardHtml(c));
    body = mine.length ? `<div class="played">${mine.join(" ")}</div>` : "";
  }
  return `<div class="hand seat-${seat}${turn ? " turn" : ""}" id="hand-${seat}"><div class="who">${who}</div>${name}${body}</div>`;
}

function renderBoardView(view, tableId) {
  const tricks = tricksOf(view.cards || [], view.result && view.result.contract);
  const n = tricks.length;
  const key = `${tableId}/${view.board}`;
  // a finished board opens on the whole deal; a board in play follows the play
  if (shownKey !== key) { shownKey = key; step = view.status === "complete" ? 0 : null; }
  const k = step === null ? n : Math.min(step, n);
  const gone = new Set();
  tricks.slice(0, k).forEach((t) => t.cards.forEach(([, c]) => gone.add(c)));
  const cur = k > 0 ? tricks[k - 1] : null;
  const h = hands(view.deal);
  const felt = (cur ? cur.cards.map(([s, c]) => `<span class="c ${s}">${cardHtml(c)}</span>`).join("") : "") +
    (cur ? "" : `<div class="info">${T("board")} ${esc(view.board)}<br>${T("dealer")} ${L[lang].seats[view.dealer] || ""}<br>${T("vul")} ${esc(view.vul || "")}</div>`);
  const diagram = `<div class="diagram" id="diagram">${ORDER.split("").map((s) => handHtml(s, h ? h[s] : null, gone, view, cur && cur.winner === s)).join("")}
     <div class="table-felt" id="felt">${felt}</div></div>${h ? "" : `<p class="muted" id="hidden">${T("hidden")}</p>`}`;
  // auction: columns W N E S, first call under the dealer
  const cols = ["W", "N", "E", "S"];
  const cells = [];
  for (let i = 0; i < cols.indexOf(view.dealer || "W"); i++) cells.push("<td></td>");
  const irrs = Object.fromEntries((view.irregularities || []).map((i) => [i.id, i]));
  (view.calls || []).forEach(([seat, call, irr]) => {
    const i = irr != null ? irrs[irr] : null;
    const title = i ? ` title="${esc((i.text && (i.text[lang] || i.text.en)) || i.code)}"` : "";
    cells.push(`<td class="${i ? "irr" : ""}"${title}>${callHtml(call)}${i ? "*" : ""}</td>`);
  });
  let rows = "";
  for (let i = 0; i < cells.length; i += 4) rows += `<tr>${cells.slice(i, i + 4).join("")}</tr>`;
  const auction = `<table class="auction" id="auction"><thead><tr>${cols.map((c) => `<th>${L[lang].seats[c]}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>`;
  // per card, double dummy: declarer's tricks with best play after each card (a card
  // that changes it is marked)
  const trace = traces[`${session}|${key}|${(view.cards || []).length}`];
  const ddAfter = (i) => (trace && trace.available && trace.tricks[i] != null ? trace.tricks[i] : null);
  const ddCell = (i) => {
    const v = ddAfter(i), before = ddAfter(i - 1);
    return v == null ? "" : `<sub class="dd${before != null && before !== v ? " swing" : ""}">${v}</sub>`;
  };
  const trickRows = tricks.map((t, i) => `<tr class="${i === k - 1 ? "cur" : ""}"><td>${i + 1}</td>${t.cards.map(([s, c], j) => `<td>${s} ${cardHtml(c)}${ddCell(4 * i + j + 1)}</td>`).join("")}<td>${t.winner ? "→ " + t.winner : ""}</td></tr>`).join("");
  const won = { NS: 0, EW: 0 };
  tricks.slice(0, k).forEach((t) => { if (t.winner) won["NS".includes(t.winner) ? "NS" : "EW"] += 1; });
  const ddNow = ddAfter(Math.min(4 * k, (view.cards || []).length));
  const running = `<div id="running">${T("tricksSoFar")}: ${T("ns")} ${won.NS} · ${T("ew")} ${won.EW}` +
    (ddNow != null ? ` · <span id="dd-now">${T("ddLine")} ${ddNow}</span>` : "") + "</div>";
  const r = view.result;
  const result = r ? `<div class="result" id="result">${contractHtml(r)}${r.contract !== "Pass" ? ` · ${esc(r.tricks)} ${T("tricks")}` : ""} · ${T("score")} ${r.score_ns > 0 ? "+" : ""}${esc(r.score_ns)}</div>
     ${view.claim ? `<div class="muted">${T("claim")}: ${esc(view.claim.tricks)} ${T("tricks")}</div>` : ""}` : `<div class="muted">${T("playing")}</div>`;
  const irr = (view.irregularities || []).map((i) => `<li><b>${esc(i.code)}</b> (Law ${esc(i.law || "")}) ${esc((i.text && (i.text[lang] || i.text.en)) || "")} <span class="muted">${esc(i.status)}</span></li>`).join("");
  const title = `${T("table")} ${esc(tableId)} · ${T("board")} ${esc(view.board)}${view.round ? ` · ${T("round")} ${esc(view.round)}` : ""}` +
    (view.ns ? ` · ${T("ns")} ${esc(view.ns)} – ${T("ew")} ${esc(view.ew || "")}` : "");
  // the step buttons sit under the diagram (on a phone too)
  return `<div class="grid"><div><div class="panel"><h2 id="board-title">${title}</h2>${diagram}
    <div class="steps"><button id="first" aria-label="${T("first")}">|◀</button><button id="prev" aria-label="${T("prev")}">◀</button>
      <span id="step">${T("trick")} ${k} / ${n}</span><button id="next" aria-label="${T("next")}">▶</button><button id="last" aria-label="${T("last")}">▶|</button></div>
    ${running}<p class="muted keys">${T("keys")}</p></div>
    <div class="panel"><h2>${T("result")}</h2>${result} <p><a href="#/board/${esc(view.board)}">${T("results")}</a></p></div></div>
    <div><div class="panel"><h2>${T("auction")}</h2>${auction}</div>
    <div class="panel"><h2>${T("play")}</h2>
      <div class="scroll"><table class="tricks" id="tricks">${trickRows}</table></div></div>
    ${irr ? `<div class="panel"><h2>${T("irregularities")}</h2><ul class="irregularities" id="irregularities">${irr}</ul></div>` : ""}</div></div>`;
}

let tableCache = null;
const traces = {};          // session|table/board|cards -> per-card double dummy
let keys = null;            // the step-through's keyboard actions on a table page
async function renderTable(tableId, boardNo) {
  const [data, state] = await Promise.all([getJSON(`/api/table/${encodeURIComponent(tableId)}` + q()), getJSON("/api/state" + q())]);
  setHeader(state);
  tableCache = data;
  draw(tableId, boardNo);
}
function draw(tableId, boardNo) {
  const data = tableCache;
  let view = data.snapshot;
  if (boardNo) view = data.boards.find((b) => String(b.board) === String(boardNo)) || view;
  const nav = data.boards.map((b) => `<a href="#/table/${encodeURIComponent(tableId)}/${b.board}">${b.board}</a>`).join(" ");
  const now = data.now && (!view || data.now.board !== view.board) ? `<p id="now">${T("now")}: ${nowHtml(data.now)}</p>` : "";
  document.getElementById("main").innerHTML = view ?
    `${now}<p>${T("boards")}: ${nav}</p>${renderBoardView(view, tableId)}` : `${now}<p class="muted">${T("none")}</p>`;
  const n = tricksOf(view ? view.cards || [] : [], null).length;
  const cur = step === null ? n : step;
  const go = (s) => { step = Math.max(0, Math.min(n, s)); if (step === n && view && view.status !== "complete") step = null; draw(tableId, boardNo); };
  keys = { ArrowLeft: () => go(cur - 1), ArrowRight: () => go(cur + 1), Home: () => go(0), End: () => go(n) };
  const b = (id, f) => { const e = document.getElementById(id); if (e) e.onclick = f; };
  b("first", keys.Home); b("prev", keys.ArrowLeft); b("next", keys.ArrowRight); b("last", keys.End);
  if (view && view.deal && view.result && view.result.contract && view.result.contract !== "Pass") {
    const tkey = `${session}|${tableId}/${view.board}|${(view.cards || []).length}`;
    if (!(tkey in traces)) {
      traces[tkey] = null;
      getJSON(`/api/dd/${encodeURIComponent(tableId)}/${view.board}` + q()).then((t) => {
        traces[tkey] = t;
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
  const [state, data] = await Promise.all([getJSON("/api/state" + q()), getJSON(`/api/board/${boardNo}` + q())]);
  setHeader(state);
  const pairCell = (r, side) => `<td>${esc(r[side] || "")}${r.players && r.players[side] ? ` <span class="muted">${esc(r.players[side])}</span>` : ""}</td>`;
  const rows = data.results.map((r) => `<tr><td>${esc(r.table)}</td>${pairCell(r, "ns")}${pairCell(r, "ew")}<td>${contractHtml(r)}</td><td>${r.lead ? cardHtml(r.lead) : ""}</td><td>${r.contract === "Pass" ? "" : esc(r.tricks)}</td><td>${esc(r.score_ns)}</td><td>${esc(r.mp_ns ?? "")}</td><td>${esc(r.pct_ns ?? "")}</td></tr>`).join("");
  const freq = data.frequency.map((f) => `<tr><td>${contractHtml(f)}</td><td>${esc(f.score_ns)}</td><td>${esc(f.count)}</td></tr>`).join("");
  let dd = `<p class="muted" id="dd-absent">${T("ddAbsent")}</p>`;
  if (data.dd && data.dd.available) {
    const den = ["NT", "S", "H", "D", "C"];
    dd = `<table class="dd" id="dd"><tr><th></th>${den.map((d) => `<th>${d === "NT" ? "NT" : suitHtml(d)}</th>`).join("")}</tr>` +
      ORDER.split("").map((s) => `<tr><th>${L[lang].seats[s]}</th>${den.map((d) => { const t = data.dd.tricks[d][s]; return `<td>${t >= 7 ? t - 6 : "–"}</td>`; }).join("")}</tr>`).join("") +
      `</table><p>${T("par")}: ${data.dd.par.map(esc).join(", ")} (${data.dd.par_score_ns > 0 ? "+" : ""}${data.dd.par_score_ns})</p>`;
  } else if (!data.deal) { dd = ""; }
  document.getElementById("main").innerHTML = `<div class="panel"><h2>${T("board")} ${esc(boardNo)} · ${T("results")}</h2>
    <div class="scroll"><table class="list" id="results"><thead><tr><th>${T("table")}</th><th>${T("ns")}</th><th>${T("ew")}</th><th>${T("contract")}</th><th>${T("lead")}</th><th>${T("tricks")}</th><th>${T("score")}</th><th>${T("mp")}</th><th>${T("pct")}</th></tr></thead><tbody>${rows}</tbody></table></div>
    ${data.imps_ns != null ? `<p id="imps">${T("imps")}: ${esc(data.imps_ns)}</p>` : ""}</div>
    <div class="panel"><h2>${T("frequency")}</h2><div class="scroll"><table class="list" id="frequency"><thead><tr><th>${T("contract")}</th><th>${T("score")}</th><th>${T("count")}</th></tr></thead><tbody>${freq}</tbody></table></div></div>
    <div class="panel"><h2>${T("dd")}</h2><div class="scroll">${dd}</div></div>`;
}

let pending = null;
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "table" && parts[1]) return renderTable(parts[1], parts[2]);
  if (parts[0] === "board" && parts[1]) return renderBoard(parts[1]);
  return renderHome();
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
