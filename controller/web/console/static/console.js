// The director's console page: room, table and log views drawn from Server-Sent Events.
// Plain JavaScript, no build step, no external asset.
"use strict";
(() => {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
  const csrf = meta("csrf");
  let lang = document.documentElement.lang || "en";
  let L = {};
  let OPT = null;
  let ROUNDS = {};                  // table -> board -> round (the session file, if given)
  let DEALS = {};                   // board -> seat -> cards (the deals file, if given)
  let SESSION = { session: null };  // the session file's tables, boards, pairs, scores
  let ROOM = { clock: null, played: {} };   // the round's clock, boards each table played
  let skew = 0;                     // the server's clock minus this page's
  const BOARD_MINUTES = 7.5;        // the usual pace: a round's default length per board
  const tables = new Map();
  const answers = new Map();        // seq -> answer text
  const sent = [];                  // rulings sent from this page: {seq, table, text}
  const selected = {};              // table -> selected alert id
  const inputs = {};                // input id -> value typed (kept across redraws)
  let connected = false;
  let CALLS = [];                   // the open calls and claim presses, longest waiting first
  let callsSeen = null;             // call ids already announced (null: before the snapshot)
  const SUIT = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

  const t = (key) => (L[key] && (L[key][lang] || L[key].en)) || key;
  const tx = (obj) => (obj && (obj[lang] || obj.en)) || "";

  // bidi controls in a name or a text from the broker would reorder what is shown around
  // it (a player called "\u202Eevil"): dropped from every text the page shows
  const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v).replace(BIDI, ""));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c).replace(BIDI, "")));
    }
    return node;
  }

  const cardText = (c) => (c && c.length === 2 ? SUIT[c[0]] + c[1] : c || "");
  function callText(c) {
    if (!c) return "";
    const m = /^([1-7])(NT|[SHDC])(X{0,2})$/.exec(c);
    return m ? m[1] + (m[2] === "NT" ? "NT" : SUIT[m[2]]) + m[3] : c;
  }
  function age(seconds) {
    const s = Math.max(0, Math.round(seconds));
    return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min`;
  }
  const now = () => Date.now() / 1000;
  const LIVE = ["open", "established"];   // an alert a ruling can still act on
  const natural = (a, b) => a.localeCompare(b, undefined, { numeric: true });

  function liveAlerts(v) {
    return (v.alerts || []).filter((a) => a.board === v.board &&
      (a.status === "open" || a.status === "established"));
  }
  // the table's open calls (kept by the console until the director closes them)
  const openCalls = (table) => CALLS.filter((c) => c.table_id === table);
  const waitingCalls = (v) => openCalls(v.table).filter((c) => !c.answered);
  function roundOf(table, board) {   // the session's round of this table's board, if known
    const boards = ROUNDS[table];
    return boards && board !== undefined ? boards[String(board)] : undefined;
  }

  // -- the room's clock: time left, boards played of the round, late and slow tables ------
  const serverNow = () => now() + skew;
  function roundBoards(table, round) {   // the boards the table plays in that round
    return Object.entries(ROUNDS[table] || {}).filter(([, r]) => r === round)
      .map(([b]) => Number(b));
  }
  function progress(table) {
    const c = ROOM.clock;
    if (!c) return null;
    const boards = roundBoards(table, c.round);
    if (!boards.length) return null;
    const done = boards.filter((b) => (ROOM.played[table] || []).includes(b)).length;
    const elapsed = (serverNow() - c.started) / (c.minutes * 60);
    const due = Math.min(boards.length, Math.floor(elapsed * boards.length));
    const state = done >= boards.length ? "done" : elapsed >= 1 ? "late"
      : done < due ? "slow" : "ok";
    return { done, of: boards.length, state };
  }
  function clockText() {
    const c = ROOM.clock;
    if (!c) return "";
    const left = c.started + c.minutes * 60 - serverNow();
    const mmss = (x) => `${Math.floor(Math.abs(x) / 60)}:${String(Math.floor(Math.abs(x) % 60)).padStart(2, "0")}`;
    return `${t("round")} ${c.round} · ` + (left >= 0 ? `${mmss(left)} ${t("left")}`
      : `${t("time_up")} ${mmss(left)}`) + (c.move_called ? ` · ${t("move_called")}` : "");
  }
  let wasUp = null;
  function tickClock() {
    const node = document.getElementById("clock");
    const up = !!(ROOM.clock && ROOM.clock.started + ROOM.clock.minutes * 60 < serverNow());
    if (node) {
      node.textContent = clockText();
      node.className = up ? "clock up" : "clock";
    }
    // time up: the late tables show at once
    if (wasUp !== null && up !== wasUp && route()[0] === "room") render();
    wasUp = up;
  }
  function setRoom(room) {
    ROOM = room;
    if (room.now) skew = room.now - now();
    tickClock();
  }

  function clockPanel() {
    const c = ROOM.clock;
    const rounds = [...new Set(Object.values(ROUNDS).flatMap((bs) => Object.values(bs)))];
    const next = c ? c.round + 1 : 1;
    const perRound = Object.keys(ROUNDS).length
      ? roundBoards(Object.keys(ROUNDS)[0], rounds.includes(next) ? next : 1).length : 0;
    const rnd = el("input", { id: "clock-round", type: "number", min: 1, size: 3,
                              value: inputs["clock-round"] ?? next,
                              oninput: (e) => { inputs["clock-round"] = e.target.value; } });
    const mins = el("input", { id: "clock-minutes", type: "number", min: 1, size: 3,
                               value: inputs["clock-minutes"] ?? (perRound * BOARD_MINUTES || 15),
                               oninput: (e) => { inputs["clock-minutes"] = e.target.value; } });
    const send = async (body) => {
      const [ok, d] = await post("/console/api/clock", body);
      if (ok) { delete inputs["clock-round"]; setRoom(d); render(); }
      else { const out = document.getElementById("clock-status"); out.textContent = d.error; out.className = "bad"; }
    };
    const tables = [...tables_()].map((v) => [v.table, progress(v.table)]);
    const late = tables.filter(([, p]) => p && p.state === "late").map(([x]) => x);
    const slow = tables.filter(([, p]) => p && p.state === "slow").map(([x]) => x);
    return el("section", { id: "roomclock", class: "roomclock" },
      el("label", {}, `${t("round")} `, rnd), " ",
      el("label", {}, `${t("minutes")} `, mins), " ",
      el("button", { type: "button", id: "clock-start", onclick: () => send(
        { round: Number(rnd.value), minutes: Number(mins.value) }) }, t("start_round")), " ",
      c ? el("button", { type: "button", id: "clock-move", onclick: () => send({ move: true }) },
        t("call_move")) : null,
      c ? el("p", { id: "clock-summary", class: "tline" },
        `${t("late_tables")}: ${late.sort(natural).join(", ") || "-"} · `,
        `${t("slow_tables")}: ${slow.sort(natural).join(", ") || "-"}`) : null,
      el("span", { id: "clock-status", role: "status" }));
  }
  const tables_ = () => tables.values();

  function rank(v) {
    const alerts = liveAlerts(v);
    if (waitingCalls(v).length) return 0;
    if (alerts.some((a) => a.status === "open")) return 1;
    if (v.bridge === "offline") return 2;
    if (alerts.length) return 3;
    return 4;
  }

  // -- room view -------------------------------------------------------------------------
  function roomCard(v) {
    const s = v.state || {};
    const r = rank(v);
    const calls = waitingCalls(v);
    const health = v.anomalies || [];   // the server's reader_anomalies: faults only
    const contract = s.contract ? (s.contract === "Pass" ? t("passed_out")
      : `${callText(s.contract)} ${s.declarer || ""}`) : "";
    return el("a", { class: `tcard rank${r}`, href: `#table/${encodeURIComponent(v.table)}`,
                     id: `table-${v.table}`, "data-table": v.table, "data-rank": r },
      el("div", { class: "thead" },
        el("strong", {}, `${t("table")} ${v.table}`),
        v.bridge ? el("span", { class: `dot ${v.bridge === "offline" ? "off" : "on"}`,
                                title: t("bridge") }, t(v.bridge)) : null),
      el("div", { class: "tline" },
        roundOf(v.table, s.board) ? `${t("round")} ${roundOf(v.table, s.board)} · ` : "",
        s.board ? `${t("board")} ${s.board}` : "", " · ",
        s.phase ? t("phase_" + s.phase) : "",
        s.turn ? ` · ${t("turn")} ${s.turn}` : ""),
      contract ? el("div", { class: "tline" }, contract,
        s.tricks ? ` · NS ${s.tricks.NS} EW ${s.tricks.EW}` : "") : null,
      health.length ? el("div", { class: "health" }, `${t("health")}: `,
        health.join(", ")) : null,
      calls.length ? el("div", { class: "call" }, `${callLabel(calls[0])}`,
        calls[0].seat ? ` (${calls[0].seat})` : "",
        ` ${age(serverNow() - calls[0].received)} ${t("ago")}`) : null,
      progressLine(v),
      liveAlerts(v).map((a) => el("div", { class: `alert ${a.status}` }, tx(a.text),
        el("span", { class: "age" }, ` (${age(serverNow() - alertSince(a))} ${t("ago")})`))),
      evidenceLine(v));
  }

  function progressLine(v) {
    const p = progress(v.table);
    if (!p) return null;
    return el("div", { class: `tline progress ${p.state}`, "data-progress": p.state },
      `${t("boards_played")} ${p.done}/${p.of}`,
      p.state === "late" || p.state === "slow" ? ` · ${t(p.state)}` : "");
  }

  // the room card's one line of evidence: tempo flags and a claim's verdict, if any
  function evidenceLine(v) {
    const flags = (v.evidence && v.evidence.tempo && v.evidence.tempo.flags) || [];
    const cc = v.claim_check;
    if (!flags.length && !(cc && cc.verdict !== "exact")) return null;
    return el("div", { class: "tline bad evidence-line" },
      flags.length ? `${t("tempo_flags")}: ${flags.length}` : "",
      flags.length && cc ? " · " : "",
      cc ? `${t("claim_check")}: ${cc.verdict}` : "");
  }

  // when an alert was first seen (its history's first status)
  const alertSince = (a) => ((a.history || [])[0] || {}).received || serverNow();
  // how long a table has waited: its oldest unanswered call, else its oldest live alert
  function waitedSince(v) {
    const calls = waitingCalls(v);
    if (calls.length) return calls[0].received;
    const since = liveAlerts(v).map(alertSince);
    return since.length ? Math.min(...since) : null;
  }
  function roomOrder(a, b) {
    const wa = waitedSince(a), wb = waitedSince(b);
    const waited = wa !== null && wb !== null ? wa - wb : 0;
    return rank(a) - rank(b) || waited || natural(a.table, b.table);
  }

  // -- the calls: every open call and claim press of the room, longest waiting first -------
  const callLabel = (c) => t(c.button === "claim" ? "claim_pressed" : "director_called");

  async function callAction(c, action) {
    const r = await fetch(`/console/api/call/${c.id}/${action}`,
                          { method: "POST", headers: { "X-CSRF-Token": csrf } });
    if (!r.ok) {
      const out = document.getElementById("send-status");
      if (out) { out.textContent = `${t("refused")}: ${(await r.json()).error}`; out.className = "bad"; }
    }
  }

  function callItem(c, withTable) {
    return el("li", { class: `callitem${c.answered ? " answered" : ""}`, "data-call": c.id,
                      "data-table": c.table_id, "data-button": c.button },
      withTable ? el("a", { href: `#table/${encodeURIComponent(c.table_id)}` },
        `${t("table")} ${c.table_id}`) : null,
      withTable ? " · " : "",
      el("b", {}, callLabel(c)), c.seat ? ` (${c.seat})` : "",
      c.board ? ` · ${t("board")} ${c.board}` : "",
      " · ", el("span", { class: "age" }, `${age(serverNow() - c.received)} ${t("ago")}`),
      c.answered ? ` · ${t("call_answered")} (${c.answered_by || ""})` : "",
      c.callback ? el("span", { class: c.callback <= serverNow() ? "callback due" : "callback" },
        c.callback <= serverNow() ? ` · ${t("call_back_now")}`
          : ` · ${t("call_back_at")} ${new Date((c.callback - skew) * 1000).toLocaleTimeString()}`)
        : "",
      " ",
      c.answered ? null : el("button", { type: "button", class: "call-answer",
        onclick: () => callAction(c, "answered") }, t("call_answered")),
      el("button", { type: "button", class: "call-back", onclick: async () => {
        const m = window.prompt(t("call_back_minutes"), "10");
        if (m === null) return;
        const [ok, d] = await post(`/console/api/call/${c.id}/callback`, { minutes: Number(m) });
        if (!ok) window.alert(d.error);
      } }, t("call_back")),
      el("button", { type: "button", class: "call-ruled",
        onclick: () => callAction(c, "ruled") }, t("call_ruled")),
      el("button", { type: "button", class: "call-dismiss",
        onclick: () => callAction(c, "dismissed") }, t("call_dismiss")));
  }

  function callsBlock() {
    if (!CALLS.length) return el("section", { id: "calls", class: "calls empty" });
    return el("section", { id: "calls", class: "calls" },
      el("h2", {}, `${t("calls")} (${CALLS.length})`),
      el("ol", {}, CALLS.map((c) => callItem(c, true))));
  }

  // a new call: a sound and, on a phone, a vibration (the director may not be looking)
  function announce(calls) {
    const ids = new Set(calls.map((c) => c.id));
    const fresh = callsSeen !== null && calls.some((c) => !callsSeen.has(c.id));
    callsSeen = new Set([...(callsSeen || []), ...ids]);
    if (fresh) ring();
  }

  function ring() {
    document.body.dataset.lastAlarm = String(Date.now());
    try { if (navigator.vibrate) navigator.vibrate([200, 100, 200]); } catch (e) { /* none */ }
    try {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return;
      const ctx = new Ctx();
      const osc = ctx.createOscillator();
      osc.frequency.value = 880;
      osc.connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.25);
      osc.onended = () => ctx.close();
    } catch (e) { /* no sound: the list still shows it */ }
  }

  // a call-back that falls due: the same sound and vibration as a new call, once
  const reminded = new Set();
  function remind() {
    const due = CALLS.filter((c) => c.callback && c.callback <= serverNow() &&
                             !reminded.has(`${c.id}:${c.callback}`));
    if (!due.length) return;
    for (const c of due) reminded.add(`${c.id}:${c.callback}`);
    ring();
    if (route()[0] !== "log") render();
  }

  function renderRoom(app) {
    const list = [...tables.values()].sort(roomOrder);
    app.replaceChildren(callsBlock(), clockPanel(), el("section", { id: "room" },
      list.length ? list.map(roomCard) : el("p", {}, t("no_tables"))));
  }

  function updateRoomCard(view) {
    const room = document.getElementById("room");
    if (!room || !room.querySelector(".tcard")) { renderRoom(document.getElementById("app")); return; }
    const old = document.getElementById(`table-${view.table}`);
    const card = roomCard(view);
    if (old && old.dataset.rank === card.dataset.rank) { old.replaceWith(card); return; }
    if (old) old.remove();
    const after = [...room.children].find((n) => n.dataset.table &&
      roomOrder(view, tables.get(n.dataset.table) || view) < 0);
    room.insertBefore(card, after || null);
  }

  // -- table view ------------------------------------------------------------------------
  function auctionTable(s) {
    const seats = ["N", "E", "S", "W"];
    const cells = [];
    const start = seats.indexOf(s.dealer || "N");
    for (let i = 0; i < start; i++) cells.push("");
    for (const [, call] of s.auction || []) cells.push(callText(call));
    const rows = [];
    for (let i = 0; i < cells.length; i += 4) rows.push(cells.slice(i, i + 4));
    return el("table", { class: "auction" },
      el("tr", {}, seats.map((x) => el("th", {}, x))),
      rows.map((row) => el("tr", {}, row.map((c) => el("td", {}, c)))));
  }

  function playList(v) {
    const byTrick = new Map();
    for (const c of v.cards || []) {
      if (!byTrick.has(c.trick)) byTrick.set(c.trick, []);
      byTrick.get(c.trick).push(`${c.seat} ${cardText(c.card)}`);
    }
    return el("ol", { class: "play" }, [...byTrick.entries()].map(([n, cs]) =>
      el("li", { value: n }, cs.join(", "))));
  }

  // The director's evidence (the evidence topic): tempo of each call and card, the flags the
  // policy's thresholds raise, and the claim's double-dummy check. Never on a table display.
  function evidenceBlock(v) {
    const ev = v.evidence;
    const cc = v.claim_check;
    if (!ev || !ev.tempo) return null;
    const flags = ev.tempo.flags || [];
    const secs = (x) => (x === null || x === undefined ? "-" : `${x} ${t("seconds")}`);
    const calls = ev.tempo.calls || [];
    const byTrick = new Map();
    for (const [seat, card, trick, sec] of ev.tempo.cards || []) {
      if (!byTrick.has(trick)) byTrick.set(trick, []);
      byTrick.get(trick).push(`${seat} ${cardText(card)} ${secs(sec)}`);
    }
    return el("div", { id: "evidence", class: "evidence" },
      el("h3", {}, t("tempo")),
      flags.length ? el("ul", { id: "tempo-flags" }, flags.map((f) => el("li",
        { class: "bad", "data-kind": f.kind },
        `${f.seat} ${f.call ? callText(f.call) : cardText(f.card)}`,
        f.trick ? ` (${t("trick")} ${f.trick})` : "", `: ${secs(f.seconds)}`,
        f.usual !== null && f.usual !== undefined ? ` (${t("usual")} ${secs(f.usual)})` : "",
        ` · ${f.kind.replace(/_/g, " ")} · Law ${f.law}`)))
        : el("p", { id: "tempo-flags" }, t("no_tempo_flags")),
      // before the first call's time comes in, say so rather than an empty "Auction:"
      el("p", { id: "tempo-calls", class: "tline" }, `${t("auction")}: `,
        calls.length ? calls.map(([seat, call, sec]) =>
          `${seat} ${callText(call)} ${secs(sec)}`).join(" · ") : t("no_calls_yet")),
      byTrick.size ? el("details", { id: "tempo-cards" }, el("summary", {}, t("play")),
        el("ol", {}, [...byTrick.entries()].map(([n, cs]) =>
          el("li", { value: n }, cs.join(", "))))) : null,
      cc ? el("div", { id: "claim-check", "data-verdict": cc.verdict },
        el("h3", {}, t("claim_check")),
        el("p", {}, cc.verdict === "pending" ? t("claim_pending")
          : cc.makeable !== null && cc.makeable !== undefined
            ? `${t("claimed")} ${cc.claimed} / ${cc.remaining} · ${t("makeable")} ` +
              `${cc.makeable} · ${cc.verdict}`
            : `${cc.verdict}: ${cc.reason || ""}`),
        cc.line ? el("p", { class: "tline" }, `${t("dd_line")}: `,
          cc.line.map(([seat, card]) => `${seat} ${cardText(card)}`).join(", ")) : null)
        : null);
  }

  function handsBlock(v, s) {
    const dealt = s.board !== undefined ? DEALS[String(s.board)] : undefined;
    const hands = dealt || v.scans || {};
    if (!Object.keys(hands).length) return null;
    const hand = (cards) => ["S", "H", "D", "C"].map((suit) => SUIT[suit] +
      (cards || []).filter((c) => c[0] === suit).map((c) => c[1]).join("")
      ).join(" ");
    return [el("h3", {}, t("hands")), el("table", { class: "hands", id: "hands" },
      ["N", "E", "S", "W"].map((seat) => el("tr", {}, el("th", {}, seat),
        el("td", {}, hand(hands[seat])))))];
  }

  function objectList(obj) {
    const entries = Object.entries(obj || {});
    if (!entries.length) return "-";
    return entries.map(([k, x]) => `${k}: ${Array.isArray(x) ? x.map(cardText).join(" ")
      : typeof x === "object" ? JSON.stringify(x) : x}`).join("; ");
  }

  function field(name, id) {
    const key = `${id}:${name}`;
    const attrs = { name, id: key, "aria-label": t(name === "tricks" ? "tricks" : name),
                    oninput: (e) => { inputs[key] = e.target.value; } };
    let input;
    if (name === "suit" || name === "seat") {
      const values = name === "suit" ? ["S", "H", "D", "C"] : ["N", "E", "S", "W"];
      input = el("select", attrs, values.map((x) => el("option", { value: x },
        name === "suit" ? SUIT[x] : x)));
      input.addEventListener("change", (e) => { inputs[key] = e.target.value; });
    } else {
      input = el("input", { ...attrs, type: name === "card" ? "text" : "number",
        min: name === "tricks" ? 0 : name === "board" ? 1 : null,
        max: name === "tricks" ? 13 : null, size: 3, placeholder: t(name) });
    }
    if (inputs[key] !== undefined) input.value = inputs[key];
    return el("label", {}, `${t(name)} `, input);
  }

  // the alert's params.choices ("penalty_card,lead"): the director's choices it waits for
  function choicesOf(a) {
    const raw = a.params && a.params.choices;
    if (typeof raw === "string") return raw.split(",").map((c) => c.trim()).filter(Boolean);
    if (Array.isArray(raw)) return raw.filter((c) => typeof c === "string");
    return null;
  }

  // the rulings offered on an alert: only the choices it lists, else those that are no
  // choice (the server checks the same: options.offered_for)
  function offeredFor(a) {
    const all = OPT.codes[a.code] || OPT.default;
    const choices = choicesOf(a);
    if (choices === null) return all.filter((o) => !o.choice);
    const some = all.filter((o) => o.choice && choices.includes(o.choice));
    return some.length ? some : OPT.default;
  }

  function optionRow(table, alertId, opt) {
    const id = `${table}:${alertId ?? "table"}:${opt.key}`;
    const fields = opt.inputs.map((n) => field(n, id));
    const send = async () => {
      // a ruling that takes away what the table did is asked twice (it can be reversed
      // from the ruling log where the contract allows)
      if (opt.confirm && !window.confirm(`${t("confirm_ruling")}\n${tx(opt.label)}` +
          ` (Law ${opt.law}) · ${t("table")} ${table}`)) return;
      const body = { table, ruling: opt.ruling, fixed: opt.fixed, confirmed: opt.confirm };
      if (alertId !== null) body.alert = alertId;
      // the record: the facts as found and a note, typed once for the rulings of the table
      body.facts = inputs[`record:${table}:facts`] || "";
      body.note = inputs[`record:${table}:note`] || "";
      for (const n of opt.inputs) body[n] = inputs[`${id}:${n}`] ??
        document.getElementById(`${id}:${n}`).value;
      const out = document.getElementById("send-status");
      try {
        const r = await fetch("/console/api/ruling", { method: "POST",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
          body: JSON.stringify(body) });
        const d = await r.json();
        if (!r.ok) { out.textContent = `${t("refused")}: ${d.error}`; out.className = "bad"; return; }
        sent.push({ seq: d.seq, table, text: `${tx(opt.label)} (${opt.law})` +
          (alertId !== null ? ` #${alertId}` : "") });
        render();
      } catch (e) {
        out.textContent = String(e); out.className = "bad";
      }
    };
    return el("div", { class: "option" },
      el("button", { type: "button", "data-ruling": opt.ruling, "data-key": opt.key,
                     onclick: send }, tx(opt.label)),
      fields, el("span", { class: "explain" }, tx(opt.explain)));
  }

  function alertItem(v, a) {
    const isSel = selected[v.table] === a.id;
    return el("li", { class: `alert ${a.status}${isSel ? " selected" : ""}`, "data-id": a.id,
                      "data-code": a.code, tabindex: 0,
                      onclick: () => { selected[v.table] = a.id; render(); },
                      onkeydown: (e) => {
                        if (e.key === "Enter" || e.key === " ") { selected[v.table] = a.id; render(); }
                      } },
      el("div", {}, el("b", {}, `#${a.id} ${a.code}`), ` ${t("status_" + a.status)}`),
      el("div", { class: "atext" }, tx(a.text)),
      isSel ? el("details", { open: true }, el("summary", {}, t("history")),
        el("ul", {}, (a.history || []).map((h) => el("li", {},
          `${new Date(h.received * 1000).toLocaleTimeString()} ${t("status_" + h.status)} `
          + `${h.law || ""} ${h.detail || ""}`)))) : null);
  }

  // the pairs at the table (the state's ns/ew, else the session's movement) and their names
  function pairsLine(name, s) {
    const at = (SESSION.pairs_at || {})[name] || {};
    const both = s.ns !== undefined && s.ew !== undefined ? [s.ns, s.ew]
      : at[String(s.board)];
    if (!both) return null;
    const who = (n) => {
      const p = (SESSION.pairs || {})[String(n)];
      return p && p.players && p.players.length ? `${n} (${p.players.join(" - ")})` : `${n}`;
    };
    return el("p", { id: "pairs", class: "tline" }, `${t("pairs")}: NS ${who(both[0])} · ` +
      `EW ${who(both[1])}`);
  }

  function renderTable(app, name) {
    const v = tables.get(name);
    if (!v) { app.replaceChildren(el("p", {}, el("a", { href: "#room" }, t("back")))); return; }
    const s = v.state || {};
    const alerts = (v.alerts || []).filter((a) => a.board === v.board);
    const sel = alerts.find((a) => a.id === selected[name]);
    const res = v.result;
    const mine = sent.filter((x) => x.table === name);
    app.replaceChildren(el("section", { id: "tableview", "data-table": name },
      el("p", {}, el("a", { href: "#room", id: "back" }, `\u2190 ${t("back")}`)),
      el("h2", {}, `${t("table")} ${name} · ${t("board")} ${s.board ?? "-"}`),
      pairsLine(name, s),
      el("p", { class: "tline" }, `${t("bridge")}: ${v.bridge ? t(v.bridge) : "?"}`,
        v.health ? ` · ${t("health")}: ${(v.anomalies || []).length
          ? v.anomalies.join(", ") : t("no_anomalies")}` : ""),
      openCalls(name).length ? el("ol", { class: "call", id: "call" },
        openCalls(name).map((c) => callItem(c, false))) : null,
      el("div", { class: "grid" },
        el("div", { class: "panel" },
          el("p", {}, `${t("phase")}: ${s.phase ? t("phase_" + s.phase) : "-"}`,
            s.turn ? ` · ${t("turn")} ${s.turn}` : "",
            ` · ${s.dealer || ""} ${s.vul || ""}`),
          el("p", {}, `${t("contract")}: `, s.contract ? callText(s.contract) : "-",
            s.declarer ? ` ${t("declarer")} ${s.declarer}` : "",
            s.tricks ? ` · ${t("tricks")} NS ${s.tricks.NS} EW ${s.tricks.EW}` : ""),
          handsBlock(v, s),
          el("h3", {}, t("auction")), auctionTable(s),
          el("h3", {}, t("play")), playList(v),
          s.current && s.current.length ? el("p", {}, `${t("trick")} ${s.trick}: `,
            s.current.map((c) => `${c.seat} ${cardText(c.card)}`).join(", ")) : null,
          el("p", {}, `${t("penalty_cards")}: ${objectList(s.penalty_cards)}`),
          el("p", {}, `${t("obligations")}: ${objectList(s.obligations)}`),
          el("div", { id: "result" }, res ? [el("h3", {}, t("result")),
            el("p", {}, res.contract === "Pass" ? t("passed_out")
              : `${callText(res.contract)} ${res.declarer || ""}`,
              res.tricks !== undefined ? ` · ${t("tricks")} ${res.tricks}` : "",
              res.tricks_played !== undefined && res.tricks_played !== res.tricks
                ? ` (${t("tricks_played")} ${res.tricks_played})` : "",
              ` · ${t("score")} `, el("b", { id: "score" }, res.score_ns))] : null),
          evidenceBlock(v)),
        el("div", { class: "panel rulings" },
          el("h3", {}, t("alerts")),
          alerts.length ? el("ul", { class: "alerts" }, alerts.map((a) => alertItem(v, a)))
            : el("p", {}, t("no_alerts")),
          el("div", { id: "record", class: "record" }, ["facts", "note"].map((f) =>
            el("label", {}, `${t(f)} `, el("input", { id: `record:${name}:${f}`, size: 24,
              value: inputs[`record:${name}:${f}`] || "",
              oninput: (e) => { inputs[`record:${name}:${f}`] = e.target.value; } })))),
          el("h3", {}, t("options")),
          sel && !LIVE.includes(sel.status)
            ? el("p", { id: "options", class: "closed", "data-alert": sel.id },
              `${t("status_" + sel.status)}: ${t("no_ruling_on_closed")}`)
            : sel ? el("div", { id: "options", "data-alert": sel.id },
              offeredFor(sel).map((o) => optionRow(name, sel.id, o)))
              : el("p", {}, t("select_alert")),
          el("h3", {}, t("table_actions")),
          el("div", { id: "table-options" }, OPT.table.filter((o) => !o.phases.length ||
            o.phases.includes(s.phase)).map((o) => optionRow(name, null, o))),
          el("p", { id: "send-status", role: "status" }),
          el("h3", {}, t("answer")),
          el("ul", { id: "answers" }, mine.map((x) => el("li", { "data-seq": x.seq },
            `${x.text}: `, answers.has(x.seq) ? answerText(answers.get(x.seq))
              : t("pending")))),
          scoreForm(name),
          v.errors && v.errors.length ? [el("h3", {}, t("errors")),
            el("ul", { class: "errors" }, v.errors.map((e) => el("li", {},
              `${new Date(e.received * 1000).toLocaleTimeString()} ${e.input}: ${e.error}`)))]
            : null))));
  }

  // the controller's answer: applied, no change (the ruling did nothing), refused
  function answerText(a) {
    const word = a.startsWith("refused") ? "refused" : a.startsWith("no change") ? "no_change"
      : a.startsWith("applied") ? "applied" : null;
    if (!word) return el("b", { class: "good" }, a);
    const rest = a.slice(word === "no_change" ? 9 : 7);
    return el("b", { class: word === "applied" ? "good" : "bad", "data-answer": word },
      `${t(word)}${rest}`);
  }

  async function post(url, body) {
    const r = await fetch(url, { method: "POST", body: JSON.stringify(body || {}),
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf } });
    return [r.ok, await r.json()];
  }

  // An adjusted score (Law 12C) for any board this table plays in the session: written into
  // the session file, where `bridge-table score` and `export` read it.
  function scoreForm(name) {
    const boards = (SESSION.tables || {})[name];
    if (!boards) return null;
    const id = (f) => `score:${name}:${f}`;
    const keep = (f) => (e) => { inputs[id(f)] = e.target.value; };
    const val = (f, dflt) => inputs[id(f)] ?? dflt;
    const kind = val("kind", "artificial");
    const select = (f, values, dflt, labels) => {
      const s = el("select", { id: id(f), name: f, "aria-label": t("score_" + f) },
        values.map((x, i) => el("option", { value: x }, labels ? labels[i] : x)));
      s.value = val(f, dflt);
      s.addEventListener("change", (e) => { keep(f)(e); if (f === "kind") render(); });
      return el("label", {}, `${t("score_" + f)} `, s);
    };
    const number = (f) => el("label", {}, `${t("score_" + f)} `, el("input",
      { id: id(f), name: f, type: "number", step: 10, size: 5, value: val(f, ""),
        oninput: keep(f) }));
    const art = SESSION.artificial || ["A+", "A=", "A-"];
    // the board on the table now when the movement gives it, not the table's first board:
    // a score written for board 1 while the table plays board 5 would be on the wrong board
    const now = ((tables.get(name) || {}).state || {}).board;
    const first = String(boards.includes(now) ? now : boards[0]);
    const send = async () => {
      const body = { table: name, board: val("board", first), kind,
                     confirmed: true };
      for (const f of ["ns", "ew", "score_ns", "split_ns", "split_ew", "weighted"])
        body[f] = val(f, f === "ns" || f === "ew" ? "A=" : "");
      body.note = val("note", "");
      const out = document.getElementById("score-status");
      if (!window.confirm(`${t("confirm_score")}\n${t("table")} ${name} · ` +
                          `${t("board")} ${body.board}`)) return;
      const [ok, d] = await post("/console/api/score", body);
      out.textContent = ok ? `#${d.seq} ${d.answer}` : `${t("refused")}: ${d.error}`;
      out.className = ok ? "good" : "bad";
    };
    return el("div", { id: "score-form", class: "score" },
      el("h3", {}, t("adjusted_score")),
      select("board", boards.map(String), first),
      select("kind", ["artificial", "assigned", "split", "weighted"], "artificial",
             ["A+ / A= / A- (12C1d)", `${t("assigned")} (12C1b)`, `${t("split")} (12C1e)`,
              `${t("weighted")} (12C1c)`]),
      kind === "artificial" ? [select("ns", art, "A="), select("ew", art, "A=")]
        : kind === "assigned" ? number("score_ns")
        : kind === "weighted" ? el("label", {}, `${t("score_weighted")} `, el("input",
          { id: id("weighted"), name: "weighted", size: 28, value: val("weighted", ""),
            placeholder: "50% 4H S 10, 50% 3NT N 8", oninput: keep("weighted") }))
        : [number("split_ns"), number("split_ew")],
      el("label", {}, `${t("note")} `, el("input", { id: id("note"), value: val("note", ""),
        oninput: keep("note"), size: 16 })),
      el("button", { type: "button", id: "send-score", onclick: send }, t("write_score")),
      el("p", { id: "score-status", role: "status" }));
  }

  // -- log view --------------------------------------------------------------------------
  let logStatus = ["", ""];          // the last word on the log page (kept across redraws)
  function setLogStatus(text, cls) {
    logStatus = [text, cls];
    const out = document.getElementById("log-status");
    if (out) { out.textContent = text; out.className = cls; }
  }

  async function reverse(row) {
    if (!window.confirm(`${t("confirm_reverse")} #${row.seq} (${row.ruling})`)) return;
    const [ok, d] = await post(`/console/api/reverse/${row.seq}`, { confirmed: true });
    setLogStatus(ok ? `#${d.seq}: ${t("reversal_sent")}` : `${t("refused")}: ${d.error}`,
                 ok ? "good" : "bad");
    renderLog(document.getElementById("app"));
  }

  function recordCell(row) {
    const f = (name) => el("input", { name, value: row[name] || "", size: 14,
      placeholder: t(name), "aria-label": t(name) });
    const facts = f("facts"), note = f("note");
    const appeal = el("select", { name: "appeal", "aria-label": t("appeal") },
      ["none", "appealed", "upheld", "changed", "withdrawn"].map((x) =>
        el("option", { value: x }, t("appeal_" + x))));
    appeal.value = row.appeal || "none";
    const save = async () => {
      const [ok, d] = await post(`/console/api/record/${row.seq}`,
        { facts: facts.value, note: note.value, appeal: appeal.value });
      setLogStatus(ok ? `#${row.seq} ${t("saved")}` : `${t("refused")}: ${d.error}`,
                   ok ? "good" : "bad");
    };
    return el("details", { class: "record" },
      el("summary", {}, [row.facts, row.note].filter(Boolean).join(" · ") || t("record")),
      facts, note, appeal, el("button", { type: "button", class: "save", onclick: save },
        t("save")));
  }

  let logAsked = 0;                  // the newest renderLog: an older one's answer is not drawn
  async function renderLog(app) {
    const mine = ++logAsked;
    const r = await fetch("/console/api/log");
    const d = await r.json();
    // while the log loaded the director may have gone to a table or the room (a log drawn
    // now would take that view away), or asked for the log again
    if (mine !== logAsked || route()[0] !== "log") return;
    const cols = ["seq", "when", "director", "table", "round", "board", "pairs", "alert",
                  "ruling", "law", "answer", "record", "reversal"];
    app.replaceChildren(el("section", { id: "log" },
      el("p", {}, el("a", { href: "/console/log.csv", id: "csv", download: "rulings.csv" },
        t("export_csv"))),
      el("p", { id: "log-status", role: "status", class: logStatus[1] }, logStatus[0]),
      el("div", { class: "scroll" }, el("table", { class: "log" },
        el("tr", {}, cols.map((c) => el("th", {}, c === "seq" ? "#" : t(c)))),
        (d.rulings || []).map((row) => el("tr", { "data-seq": row.seq },
          el("td", {}, row.seq), el("td", {}, new Date(row.ts * 1000).toLocaleString()),
          el("td", {}, row.director), el("td", {}, row.table_id), el("td", {}, row.round ?? ""),
          el("td", {}, row.board ?? ""), el("td", {}, row.pairs || ""),
          el("td", {}, row.alert !== null ? `#${row.alert} ${row.code || ""}` : ""),
          el("td", { title: row.payload }, rulingText(row.payload)),
          el("td", {}, row.law || ""),
          el("td", {}, row.answer ? answerText(row.answer) : t("pending")),
          el("td", {}, recordCell(row)),
          el("td", { class: "reversal" }, row.reversed_by ? `${t("reversed_by")} #${row.reversed_by}`
            : row.reverses ? `${t("reverses")} #${row.reverses}`
              : row.reversal ? el("button", { type: "button", class: "reverse",
                onclick: () => reverse(row) }, t("reverse")) : "")))))));
  }

  // The ruling as a director says it ("adjust tricks 10", "reject"), not the wire payload
  // (kept whole in the cell's title and in the CSV): its envelope and its alert (the log has
  // its own column for that) left out.
  function rulingText(payload) {
    let p;
    try { p = JSON.parse(payload); } catch (e) { return payload; }
    if (!p || typeof p !== "object") return payload;
    const envelope = ["v", "src", "seq", "ts", "alert", "ruling", "facts", "note", "confirmed"];
    const rest = Object.entries(p).filter(([k]) => !envelope.includes(k))
      .map(([k, x]) => `${k} ${typeof x === "object" ? JSON.stringify(x) : x}`);
    return [p.ruling || "", ...rest].join(" ").trim() || payload;
  }

  // -- routing, live updates ---------------------------------------------------------------
  function route() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (h.startsWith("table/")) return ["table", h.slice(6)];
    if (h === "log") return ["log", null];
    return ["room", null];
  }

  function render() {
    const app = document.getElementById("app");
    const [view, arg] = route();
    document.getElementById("nav-room").textContent = t("room");
    document.getElementById("nav-log").textContent = t("log");
    document.getElementById("logout").textContent = t("logout");
    document.title = t("title");
    document.querySelector("header h1").textContent = t("title");
    setLive(connected);
    if (view === "log") { renderLog(app); return; }
    // a live update must not take the field the director is typing in away
    const focused = document.activeElement && document.activeElement.id;
    if (view === "table") renderTable(app, arg);
    else renderRoom(app);
    const again = focused && document.getElementById(focused);
    if (again) again.focus();
  }

  function setLive(on) {
    const live = document.getElementById("live");
    live.textContent = on ? t("connected") : t("disconnected");
    live.className = on ? "live on" : "live off";
  }

  function onTable(d) {
    const v = d.view;
    tables.set(v.table, v);
    const [view, arg] = route();
    if (view === "room") updateRoomCard(v);
    else if (view === "table" && arg === v.table) render();
    document.dispatchEvent(new CustomEvent("bt:update", { detail: v }));
  }

  function connect() {
    const es = new EventSource("/console/events");
    es.addEventListener("snapshot", (e) => {
      const d = JSON.parse(e.data);
      tables.clear();
      for (const v of d.tables) tables.set(v.table, v);
      CALLS = d.calls || [];
      announce(CALLS);
      if (d.room) setRoom(d.room);
      connected = true;
      render();
    });
    es.onmessage = (e) => {
      const d = JSON.parse(e.data);
      if (d.type === "table") onTable(d);
      else if (d.type === "room") {
        setRoom(d.room);
        if (route()[0] === "room") render();
      }
      else if (d.type === "calls") {
        CALLS = d.calls;
        announce(CALLS);
        const [view] = route();
        if (view !== "log") render();
      }
      else if (d.type === "answer") { answers.set(d.seq, d.answer); render(); }
    };
    es.onerror = () => { connected = false; setLive(false); };
    es.onopen = () => { connected = true; setLive(true); };
  }

  async function init() {
    const r = await fetch("/console/api/options");
    if (r.status === 401) { location.href = "/login"; return; }
    OPT = await r.json();
    L = OPT.labels;
    DEALS = await (await fetch("/console/api/deals")).json();
    ROUNDS = await (await fetch("/console/api/rounds")).json();
    SESSION = await (await fetch("/console/api/session")).json();
    const sel = document.getElementById("lang");
    sel.addEventListener("change", () => {
      lang = sel.value;
      document.documentElement.lang = lang;
      document.cookie = `bt_lang=${lang}; path=/; samesite=strict`;
      render();
    });
    window.addEventListener("hashchange", render);
    setInterval(() => { if (route()[0] === "room") render(); },
                10000);   // ages of director calls, the tables' progress
    setInterval(() => { tickClock(); remind(); }, 1000);
    render();
    connect();
  }

  init();
})();
