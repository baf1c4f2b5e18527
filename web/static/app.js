// Hangar's browser client: a lobby, live play and watching, and replays,
// all through the REST/JSON API. The page keeps no game rules: the server
// lists the games (ListGames), the legal actions (with a preview of each)
// and the board's geometry.
//
// A game's options, state, board, actions and events come as
// google.protobuf.Any in protojson ({"@type": ..., ...fields}): the page
// draws the games it knows (DRAWERS) from their own messages, and shows
// any other game in a generic view: its title from ListGames, its state
// and events as JSON, and each legal action as a button that sends that
// action back through Act.

import * as api from "./api.js";
import * as aeroplane from "./aeroplane.js";
import * as carcassonne from "./carcassonne.js";

const app = document.getElementById("app");

// h builds an HTML element: h("button", {class: "x", onclick: f}, "text").
function h(name, attrs = {}, ...children) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) e.append(c);
  }
  return e;
}

const short = (s, prefix) => (s || "").replace(prefix, "").toLowerCase();

// GENERIC is set by the URL parameter ?generic=1 (before the #): the page
// then draws no game itself and shows every game, the two it knows
// included, in the generic view, as it shows a game it does not know. The
// browser tests drive the generic view through it.
const GENERIC = new URLSearchParams(location.search).get("generic") === "1";

// AEROPLANE and CARCASSONNE are the games this page draws, named by their
// messages' full names (GameInfo): a hosted game whose state type is one
// of theirs is drawn, whatever name the server hosts it under.
const AEROPLANE = {
  kind: "aeroplane",
  state: "hangar.aeroplane.v1.State",
  board: "hangar.aeroplane.v1.Board",
  event: "hangar.aeroplane.v1.Event",
  roll: "hangar.aeroplane.v1.Roll",
  move: "hangar.aeroplane.v1.Move",
  colour: (board, seat) => aeroplane.seatColour(board, seat),
};
const CARCASSONNE = {
  kind: "carcassonne",
  state: "hangar.carcassonne.v1.State",
  event: "hangar.carcassonne.v1.Event",
  move: "hangar.carcassonne.v1.Move",
  colour: (board, seat) => carcassonne.seatColour(seat),
};
const DRAWERS = GENERIC ? [] : [AEROPLANE, CARCASSONNE];

// games maps each hosted game's name to its GameInfo, once ListGames has
// answered (loadGames).
const games = new Map();
let gamesLoaded = null;

// loadGames reads ListGames once (again after a failure).
function loadGames() {
  if (!gamesLoaded) {
    gamesLoaded = api.listGames().then(
      (r) => {
        games.clear();
        for (const g of r.games || []) games.set(g.name, g);
        return games;
      },
      (err) => {
        gamesLoaded = null;
        throw err;
      },
    );
  }
  return gamesLoaded;
}

const titleOf = (game) => (games.get(game) || {}).title || game;

// drawerOf is the drawer of a hosted game, or null for the generic view.
function drawerOf(game) {
  const info = games.get(game);
  return (info && DRAWERS.find((d) => d.state === info.stateType)) || null;
}

// stateOf is a match's state message when drawer draws it, else null.
function stateOf(m, drawer) {
  return drawer && m && m.state && api.typeOf(m.state) === drawer.state ? m.state : null;
}

const SEAT_COLOURS = ["#d83b3b", "#2f6fd6", "#e8b81c", "#2e9e4f", "#8e44ad", "#333"];
const seatColour = (drawer, board, seat) => (drawer ? drawer.colour(board, seat) : SEAT_COLOURS[seat] || "#888");

// json is a message as the generic view prints it: indented.
const json = (msg) => JSON.stringify(msg, null, 2);

// label is a one-line summary of an Any for a button or a log line: its
// short type name and the fields not at their defaults (the JSON API
// writes every field).
export function label(any) {
  const type = api.typeOf(any);
  const set = (v) => {
    if (v === null || v === false || v === 0 || v === "" || v === "0") return undefined;
    if (Array.isArray(v)) {
      const a = v.map((x) => (x !== null && typeof x === "object" ? set(x) ?? {} : x));
      return a.length ? a : undefined;
    }
    if (typeof v === "object") {
      const o = {};
      for (const [k, x] of Object.entries(v)) {
        const y = set(x);
        if (y !== undefined) o[k] = y;
      }
      return Object.keys(o).length ? o : undefined;
    }
    return v;
  };
  const rest = set(api.fields(any));
  return type.slice(type.lastIndexOf(".") + 1) + (rest ? " " + JSON.stringify(rest) : "");
}

// boards caches GetBoard per game (the same for every match of a game).
const boards = new Map();
async function boardOf(game) {
  if (!boards.has(game)) {
    boards.set(
      game,
      api.getBoard(game).then(
        (r) => r.board,
        (err) => {
          boards.delete(game);
          throw err;
        },
      ),
    );
  }
  return boards.get(game);
}

// current is the view on screen; leaving it aborts its streams and timers.
let current = { leave() {} };

function setView(v) {
  lastError = "";
  current.leave();
  current = v;
}

function showMe() {
  const p = api.player();
  const me = document.getElementById("me");
  me.replaceChildren();
  if (p) {
    me.append(
      "Playing as ",
      h("strong", { id: "me-name" }, p.displayName),
      " ",
      h("button", { class: "link", id: "logout", onclick: () => { api.forget(); route(); } }, "switch player"),
    );
  }
}

async function route() {
  showMe();
  const hash = location.hash.replace(/^#\/?/, "");
  const [what, id] = hash.split("/");
  if (!api.token()) {
    setView({ leave() {} });
    return signup();
  }
  try {
    if (!api.player()) {
      const r = await api.me();
      localStorage.setItem("hangar.player", JSON.stringify(r.player));
      showMe();
    }
  } catch (err) {
    if (err.httpStatus === 401) {
      api.forget();
      return route();
    }
  }
  if (what === "match" && id) return matchView(decodeURIComponent(id));
  if (what === "replay" && id) return replayView(decodeURIComponent(id));
  return lobby();
}


// lastError is the view's latest error, shown until the next success.
let lastError = "";

function errorBox() {
  return h("p", { class: "error", id: "error", role: "alert" }, lastError);
}

function showError(err) {
  lastError = err ? String(err.message || err) : "";
  const box = document.getElementById("error");
  if (box) box.textContent = lastError;
  if (err) console.error(err);
}

// ---- sign up -------------------------------------------------------------

function signup() {
  const name = h("input", { id: "name", required: true, maxlength: 64, placeholder: "Your name", autofocus: true });
  const form = h(
    "form",
    {
      id: "signup",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          await api.createPlayer(name.value.trim());
          route();
        } catch (err) {
          showError(err);
        }
      },
    },
    h("h1", {}, "Welcome to Hangar"),
    h("p", {}, "Choose a display name to play. Your token stays in this browser."),
    name,
    " ",
    h("button", { id: "create-player", type: "submit" }, "Play"),
    errorBox(),
  );
  app.replaceChildren(form);
  name.focus();
}

// ---- lobby ---------------------------------------------------------------

// newMatchForm creates a match of any hosted game. The games the page
// draws show their own option boxes; another game's options are typed as
// the JSON fields of its options message (GameInfo.options_type).
function newMatchForm() {
  const infos = [...games.values()];
  const game = h("select", { id: "game" }, infos.map((g) => h("option", { value: g.name }, g.title || g.name)));
  const seats = h("input", { id: "seats", type: "number", min: 2, max: 5, value: 2 });
  const bots = h("input", { id: "bots", type: "number", min: 0, max: 4, value: 1 });
  const observe = h("input", { id: "observe", type: "checkbox" });
  const autoRoll = h("input", { id: "auto-roll", type: "checkbox" });
  const autoRollLabel = h("label", { title: "Aeroplane Chess: the server rolls each seat's die when its turn comes" }, autoRoll, " server rolls");
  const options = h("textarea", { id: "options", rows: 3, cols: 30, spellcheck: "false" });
  const optionsLabel = h("label", {}, "Options (JSON fields) ", options);
  const sync = () => {
    const info = games.get(game.value) || {};
    seats.min = info.minSeats || 1;
    seats.max = info.maxSeats || 99;
    bots.max = Math.max(0, (info.maxSeats || 99) - 1);
    const drawer = drawerOf(game.value);
    autoRollLabel.hidden = drawer !== AEROPLANE;
    optionsLabel.hidden = !!drawer || !info.optionsType;
    options.placeholder = info.optionsType ? `{} (${info.optionsType})` : "";
  };
  game.addEventListener("change", sync);
  sync();
  // optionsOf is the options Any of the form, or undefined for the game's
  // defaults.
  const optionsOf = () => {
    const info = games.get(game.value) || {};
    const drawer = drawerOf(game.value);
    if (drawer === AEROPLANE) return autoRoll.checked ? api.pack(info.optionsType, { autoRoll: true }) : undefined;
    if (drawer || !options.value.trim()) return undefined;
    let f;
    try {
      f = JSON.parse(options.value);
    } catch (err) {
      throw new Error("the options are not JSON: " + err.message);
    }
    return f["@type"] ? f : api.pack(info.optionsType, f);
  };
  return h(
    "form",
    {
      id: "new-match",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          const r = await api.createMatch({
            game: game.value,
            options: optionsOf(),
            seatCount: Number(seats.value),
            botSeats: Number(bots.value),
            observeOnly: observe.checked,
          });
          location.hash = "#/match/" + r.match.matchId;
        } catch (err) {
          showError(err);
        }
      },
    },
    h("h2", {}, "New match"),
    h("label", {}, "Game ", game),
    h("label", {}, "Seats ", seats),
    h("label", {}, "Bots ", bots),
    h("label", {}, observe, " watch only"),
    autoRollLabel,
    optionsLabel,
    h("button", { id: "create-match", type: "submit" }, "Create"),
  );
}

function lobby() {
  const v = { timer: 0, leave() { clearInterval(this.timer); } };
  setView(v);
  const create = h("div", { id: "new-match-slot" }, "Loading the games…");
  loadGames().then(
    () => { if (current === v) create.replaceChildren(newMatchForm()); },
    (err) => { if (current === v) { create.replaceChildren(); showError(new Error("the games could not be read (ListGames): " + err.message)); } },
  );
  const watchId = h("input", { id: "watch-id", placeholder: "m_…" });
  const watchForm = h(
    "form",
    { id: "watch-form", onsubmit: (e) => { e.preventDefault(); if (watchId.value.trim()) location.hash = "#/match/" + watchId.value.trim(); } },
    h("h2", {}, "Watch a match"),
    watchId,
    " ",
    h("button", { type: "submit" }, "Watch"),
  );
  const open = h("div", { id: "open-matches" }, "Loading…");
  const mine = h("div", { id: "my-matches" }, "Loading…");
  app.replaceChildren(
    h("div", { class: "lobby" },
      h("section", {}, create, watchForm, errorBox()),
      h("section", {}, h("h2", {}, "Open matches ", h("button", { class: "link", onclick: () => load() }, "refresh")), open,
        h("h2", {}, "My matches"), mine)),
  );
  const me = api.player();
  async function load() {
    try {
      const [o, m] = await Promise.all([api.listMatches("MATCH_FILTER_OPEN"), api.listMatches("MATCH_FILTER_MINE"), loadGames().catch(() => null)]);
      open.replaceChildren(matchTable(o.matches || [], me, load));
      mine.replaceChildren(matchTable(m.matches || [], me, load));
    } catch (err) {
      showError(err);
    }
  }
  load();
  v.timer = setInterval(load, 5000);
}

function seatsText(m) {
  return (m.seats || [])
    .map((s) => (s.status === "SEAT_STATUS_EMPTY" ? "—" : s.displayName || "?"))
    .join(", ");
}

function matchTable(matches, me, reload) {
  if (!matches.length) return h("p", { class: "empty" }, "None.");
  const act = (f) => async () => {
    try {
      await f();
      reload();
    } catch (err) {
      showError(err);
    }
  };
  return h(
    "table",
    { class: "matches" },
    h("tr", {}, h("th", {}, "Match"), h("th", {}, "Game"), h("th", {}, "Status"), h("th", {}, "Seats"), h("th", {}, "")),
    matches.map((m) => {
      const seated = (m.seats || []).some((s) => s.playerId === me.playerId);
      const free = (m.seats || []).some((s) => s.status === "SEAT_STATUS_EMPTY");
      const status = short(m.status, "MATCH_STATUS_");
      return h(
        "tr",
        { dataset: { match: m.matchId, status } },
        h("td", {}, h("a", { href: "#/match/" + m.matchId }, m.matchId)),
        h("td", {}, titleOf(m.game)),
        h("td", {}, status),
        h("td", {}, seatsText(m)),
        h(
          "td",
          { class: "actions" },
          m.status === "MATCH_STATUS_OPEN" && !seated && free &&
            h("button", { class: "join", onclick: act(async () => { await api.joinMatch(m.matchId); location.hash = "#/match/" + m.matchId; }) }, "Join"),
          m.status === "MATCH_STATUS_OPEN" && m.creatorId === me.playerId &&
            h("button", { class: "start", onclick: act(() => api.startMatch(m.matchId)) }, "Start"),
          h("a", { href: "#/match/" + m.matchId, class: "button" }, m.status === "MATCH_STATUS_ACTIVE" && seated ? "Play" : "Watch"),
          m.status === "MATCH_STATUS_FINISHED" && h("a", { href: "#/replay/" + m.matchId, class: "button" }, "Replay"),
        ),
      );
    }),
  );
}

// ---- events --------------------------------------------------------------

// drawnEvent is the notation of a game event of a game the page draws,
// or null for one the generic view prints.
function drawnEvent(any) {
  return DRAWERS.some((d) => d.event === api.typeOf(any)) ? any.notation || "" : null;
}

// describeEvent is one line of the event log.
export function describeEvent(ev, m) {
  const name = (seat) => {
    const s = m && (m.seats || []).find((x) => x.seat === seat);
    return s && s.displayName ? `${s.displayName} (seat ${seat})` : `seat ${seat}`;
  };
  if (ev.game) return drawnEvent(ev.game) ?? label(ev.game);
  if (ev.matchCreated) return `created: ${titleOf(ev.matchCreated.game)}, ${ev.matchCreated.seatCount} seats`;
  if (ev.playerJoined) return `seat ${ev.playerJoined.seat}: ${ev.playerJoined.bot ? "a bot" : ev.playerJoined.displayName} joined`;
  if (ev.playerLeft) return `seat ${ev.playerLeft.seat} left${ev.playerLeft.forfeited ? " (forfeited)" : ""}`;
  if (ev.matchStarted) return `started: seats ${(ev.matchStarted.seats || []).join(", ")}`;
  if (ev.matchEnded) return `ended: ${(ev.matchEnded.ranking || []).map((s, i) => `${(ev.matchEnded.places || [])[i] || i + 1}. ${name(s)}`).join(", ")}`;
  if (ev.turnTimedOut) return `seat ${ev.turnTimedOut.seat} timed out`;
  if (ev.seatHandedToBot) return `seat ${ev.seatHandedToBot.seat} handed to a bot`;
  if (ev.playersInvited) return `invited ${(ev.playersInvited.playerIds || []).length} players`;
  if (ev.inviteCodeCreated) return "invite code created";
  if (ev.inviteCodeRevoked) return "invite code revoked";
  if (ev.invitationAccepted) return "invitation accepted";
  if (ev.invitationDeclined) return "invitation declined";
  return "event";
}

// logItem is an event of the log: a line of text, or for a game event the
// page does not draw, its one-line summary that opens onto its JSON.
function logItem(ev, m) {
  const li = h("li", { dataset: { seq: ev.seq } }, h("span", { class: "seq" }, ev.seq), " ");
  if (ev.game && drawnEvent(ev.game) === null) {
    li.dataset.type = api.typeOf(ev.game);
    li.append(h("details", { class: "json" }, h("summary", {}, label(ev.game)), h("pre", {}, json(ev.game))));
  } else {
    li.append(describeEvent(ev, m));
  }
  return li;
}

// ---- a match: play or watch ------------------------------------------------

function mySeat(m) {
  const me = api.player();
  const s = me && (m.seats || []).find((x) => x.playerId === me.playerId && x.status === "SEAT_STATUS_PLAYER");
  return s ? s.seat : -1;
}

function seatList(m, drawer, board, turnSeat) {
  const carc = drawer === CARCASSONNE ? stateOf(m, drawer) : null;
  return h(
    "ul",
    { class: "seats", id: "seats" },
    (m.seats || []).map((s) =>
      h(
        "li",
        { class: s.seat === turnSeat && m.status === "MATCH_STATUS_ACTIVE" ? "turn" : "", dataset: { seat: s.seat } },
        h("span", { class: "swatch", style: `background:${seatColour(drawer, board, s.seat)}` }),
        ` ${s.seat}: ${s.status === "SEAT_STATUS_EMPTY" ? "(empty)" : s.displayName}`,
        s.status === "SEAT_STATUS_BOT" ? " (bot)" : "",
        s.status === "SEAT_STATUS_FORFEITED" ? " (forfeited)" : "",
        carc ? ` — ${(carc.scores || [])[s.seat] ?? 0} pts, ${(carc.supply || [])[s.seat] ?? 0} followers` : "",
        s.place ? ` — place ${s.place}` : "",
      ),
    ),
  );
}

// drawState draws a drawn game's state into the board svg.
function drawState(svg, m, drawer, board, hl) {
  const st = stateOf(m, drawer);
  if (st && drawer === AEROPLANE) {
    if (board) aeroplane.draw(svg, board, st, hl);
    else svg.replaceChildren();
  } else if (st && drawer === CARCASSONNE) {
    carcassonne.draw(svg, st, hl);
  } else {
    svg.replaceChildren();
  }
  svg.dataset.version = m.version;
}

// showState prints a match's state as JSON: the generic view's board.
function showState(pre, m) {
  pre.textContent = m.state ? json(m.state) : "";
  pre.dataset.version = m.version;
}

// boardView is what the match and replay views draw the state into: the
// svg of a drawn game, or the generic view's JSON.
function boardView(drawer) {
  return drawer
    ? aeroplane.el("svg", { id: "board", class: "board", role: "img" })
    : h("pre", { id: "state-json", class: "state-json" });
}

function matchView(id) {
  const v = {
    id,
    match: null,
    drawer: null,
    legal: null,
    board: null,
    busy: false,
    hl: null,
    abort: new AbortController(),
    seqs: new Set(),
    refreshing: null,
    again: false,
    leave() {
      this.abort.abort();
    },
  };
  setView(v);
  let view = null; // the svg, or the generic view's pre, once the game is known
  const wrap = h("div", { class: "board-wrap" });
  const panel = h("div", { class: "panel", id: "panel" });
  const log = h("ol", { id: "log", class: "log" });
  const side = h("div", { class: "side" }, panel, h("h3", {}, "Events"), log);
  app.replaceChildren(h("div", { class: "match", id: "match" }, wrap, side));

  const actions = () => (v.legal && v.legal.actions) || [];
  const ofType = (type) => actions().filter((a) => api.typeOf(a) === type);
  // movesOf are the actions the drawer shows as moves; othersOf the rest,
  // which show as the generic view's buttons (every action of a game the
  // page does not draw).
  const movesOf = () => (v.drawer ? ofType(v.drawer.move) : []);
  const othersOf = () =>
    actions().filter((a) => !v.drawer || ![v.drawer.move, v.drawer.roll].includes(api.typeOf(a)));

  const ui = () => {
    const m = v.match;
    if (!m) return "loading";
    if (v.busy) return "busy";
    if (m.status === "MATCH_STATUS_OPEN") return "open";
    if (m.status !== "MATCH_STATUS_ACTIVE") return "over";
    if (!v.legal) return "watch";
    if (!actions().length) return "wait";
    if (!v.drawer) return "act";
    if (v.drawer.roll && ofType(v.drawer.roll).length) return "roll";
    return "move";
  };

  const act = (f) => async () => {
    if (v.busy) return;
    v.busy = true;
    render();
    try {
      await f();
      lastError = "";
    } catch (err) {
      showError(err);
    }
    try {
      await refresh();
    } finally {
      v.busy = false;
      render();
    }
  };

  // play sends one of the listed actions back as it came.
  const play = (action) =>
    act(async () => {
      await api.act(id, v.legal.version, action);
      v.hl = null;
    });

  function render() {
    const m = v.match;
    if (!m) return;
    const state = ui();
    const root = document.getElementById("match");
    if (!root) return;
    // Rebuild only what changed: a button replaced under the pointer
    // would swallow a click.
    const key = JSON.stringify([m.version, m.status, state, v.legal && v.legal.version, lastError, !!v.board]);
    if (key === v.rendered) return;
    v.rendered = key;
    root.dataset.ui = state;
    root.dataset.version = m.version;
    root.dataset.status = short(m.status, "MATCH_STATUS_");
    root.dataset.view = v.drawer ? v.drawer.kind : "generic";
    const seat = mySeat(m);
    const drawer = v.drawer;
    const st = stateOf(m, drawer) || {};
    const turnSeat = m.status === "MATCH_STATUS_ACTIVE" ? m.turnSeat : -1;
    if (!view) {
      view = boardView(drawer);
      wrap.replaceChildren(view);
      if (drawer) view.addEventListener("click", clickPlane);
    }
    if (drawer) drawState(view, m, drawer, v.board, v.hl);
    else showState(view, m);

    const moves = movesOf();
    const others = othersOf();
    const header = h(
      "div",
      {},
      h("h2", { id: "title" }, titleOf(m.game), " ", h("small", {}, m.matchId)),
      h("p", { id: "status", dataset: { status: short(m.status, "MATCH_STATUS_") } },
        m.status === "MATCH_STATUS_FINISHED" ? "Finished" : short(m.status, "MATCH_STATUS_"),
        ` · version ${m.version}`,
        m.status === "MATCH_STATUS_ACTIVE" && st.phase ? ` · phase ${short(st.phase, "PHASE_")}` : "",
        seat < 0 ? " · watching" : ` · you are seat ${seat}`),
      seatList(m, drawer, v.board, turnSeat),
    );
    const controls = h("div", { class: "controls" });
    if (m.status === "MATCH_STATUS_OPEN") {
      const me = api.player();
      if (seat < 0 && (m.seats || []).some((s) => s.status === "SEAT_STATUS_EMPTY"))
        controls.append(h("button", { id: "join", onclick: act(() => api.joinMatch(id)) }, "Join"));
      if (m.creatorId === me.playerId)
        controls.append(h("button", { id: "start", onclick: act(() => api.startMatch(id)) }, "Start"));
      if (seat >= 0) controls.append(h("button", { id: "leave", onclick: act(() => api.leaveMatch(id)) }, "Leave"));
      controls.append(h("p", {}, "Waiting for players. The match starts when its seats are full, or when its creator starts it."));
    }
    if (m.status === "MATCH_STATUS_ACTIVE" && drawer === AEROPLANE) {
      controls.append(
        h("div", { class: "dice" },
          h("span", { id: "die", class: "die", dataset: { die: st.die || 0 } }, st.die ? "⚀⚁⚂⚃⚄⚅"[st.die - 1] : "·"),
          h("button", {
            id: "roll",
            disabled: state !== "roll",
            onclick: () => {
              const r = ofType(AEROPLANE.roll)[0];
              if (r) play(r)();
            },
          }, "Roll")),
      );
    }
    if (m.status === "MATCH_STATUS_ACTIVE" && seat >= 0) {
      controls.append(
        h("p", { id: "prompt" },
          {
            roll: "Your turn: roll the die.",
            move: "Choose a move (hover to see it on the board).",
            act: "Your turn: choose an action.",
            wait: "Waiting for the other seats…",
            busy: "…",
          }[state] || ""),
      );
    }
    if (moves.length) {
      controls.append(
        h("ul", { id: "moves", class: "moves" },
          moves.map((mv, i) => {
            const text = drawer === AEROPLANE ? aeroplane.describe(mv) : mv.notation;
            const hl = drawer === AEROPLANE ? { seat, preview: mv.preview, planes: [mv.plane] } : { move: mv };
            const show = (x) => () => { v.hl = x; drawState(view, m, drawer, v.board, v.hl); };
            return h("li", {},
              h("button", {
                class: "move",
                dataset: { notation: mv.notation, index: i },
                disabled: state !== "move",
                onclick: play(mv),
                onmouseenter: show(hl),
                onfocus: show(hl),
                onmouseleave: show(null),
              }, text));
          })),
      );
    }
    if (others.length) {
      // The generic view: each action as the game describes it, sent back
      // as it came.
      controls.append(
        h("ul", { id: "actions", class: "actions" },
          others.map((a, i) =>
            h("li", {},
              h("button", {
                class: "action",
                dataset: { index: i, type: api.typeOf(a) },
                title: json(a),
                disabled: !["act", "move", "roll"].includes(state),
                onclick: play(a),
              }, label(a))))),
      );
    }
    if (m.status === "MATCH_STATUS_ACTIVE" && seat >= 0) {
      controls.append(
        h("button", {
          id: "resign",
          class: "link",
          onclick: () => {
            if (confirm("Resign? A bot plays your seat to the end, and you are ranked last.")) act(() => api.leaveMatch(id))();
          },
        }, "resign"),
      );
    }
    if (m.status === "MATCH_STATUS_FINISHED" || m.status === "MATCH_STATUS_ABANDONED") {
      controls.append(h("p", { id: "result" }, resultText(m)), h("a", { href: "#/replay/" + id, class: "button", id: "to-replay" }, "Replay it"));
    }
    if (drawer === CARCASSONNE && stateOf(m, drawer)) controls.append(carcassonne.panel(st));
    panel.replaceChildren(header, controls, errorBox());
  }

  // A click on a plane plays its move when it has exactly one.
  function clickPlane(e) {
    const g = e.target.closest(".plane");
    if (!g || ui() !== "move" || v.drawer !== AEROPLANE) return;
    const mine = movesOf()
      .filter((mv) => String(mv.plane) === g.dataset.index && (mv.preview ? mv.preview.planes.some((p) => String(p.seat) === g.dataset.seat) : String(mySeat(v.match)) === g.dataset.seat));
    if (mine.length === 1) play(mine[0])();
  }

  // refresh reads the match (and the caller's legal actions) again; calls
  // made while one runs join it and make it read once more.
  function refresh() {
    if (v.refreshing) {
      v.again = true;
      return v.refreshing;
    }
    v.refreshing = (async () => {
      try {
        for (let i = 0; i < 10; i++) {
          v.again = false;
          const m = (await api.getMatch(id)).match;
          if (!v.match) {
            // The game decides the view, once: drawn or generic.
            await loadGames().catch((err) => showError(new Error("the games could not be read (ListGames): " + err.message)));
            v.drawer = drawerOf(m.game);
          }
          let legal = null;
          if (mySeat(m) >= 0 && m.status === "MATCH_STATUS_ACTIVE") {
            legal = await api.legalActions(id);
            if (legal.version !== m.version) v.again = true;
          }
          if (!v.board && v.drawer === AEROPLANE) {
            v.board = await aeroplaneBoard(m.game).catch((err) => {
              showError(new Error("the board could not be read (GetBoard): " + err.message));
              return null;
            });
          }
          v.match = m;
          v.legal = legal;
          if (!v.again) break;
        }
      } catch (err) {
        showError(err);
      } finally {
        v.refreshing = null;
      }
      if (!v.busy) render();
    })();
    return v.refreshing;
  }

  refresh().then(() => {
    api
      .watch(id, 0, (msg) => {
        if (!v.seqs.has(msg.event.seq)) {
          v.seqs.add(msg.event.seq);
          log.append(logItem(msg.event, v.match));
          log.scrollTop = log.scrollHeight;
        }
        // Stored events the state already includes need no read.
        if (!v.match || Number(msg.version) > Number(v.match.version)) refresh();
      }, v.abort.signal)
      .then(() => refresh())
      .catch(showError);
  });
}

// aeroplaneBoard is an Aeroplane Chess game's Board.
async function aeroplaneBoard(game) {
  const b = await boardOf(game);
  if (api.typeOf(b) !== AEROPLANE.board) throw new Error(`a board of type ${api.typeOf(b) || "none"}`);
  return b;
}

function resultText(m) {
  if (m.status === "MATCH_STATUS_ABANDONED") return "Abandoned.";
  const ranked = (m.seats || []).filter((s) => s.place).sort((a, b) => a.place - b.place);
  return "Finished: " + ranked.map((s) => `${s.place}. ${s.displayName || "seat " + s.seat}`).join(", ");
}

// ---- replay ----------------------------------------------------------------

async function replayView(id) {
  const v = { timer: 0, seq: 0, leave() { clearInterval(this.timer); } };
  setView(v);
  app.replaceChildren(h("p", {}, "Loading…"));
  let m;
  let events;
  let board = null;
  let drawer = null;
  try {
    [m, events] = await Promise.all([
      api.getMatch(id).then((r) => r.match),
      api.listEvents(id),
      loadGames().catch((err) => showError(new Error("the games could not be read (ListGames): " + err.message))),
    ]);
    drawer = drawerOf(m.game);
    if (drawer === AEROPLANE) board = await aeroplaneBoard(m.game);
  } catch (err) {
    app.replaceChildren(h("p", { class: "error" }, String(err.message || err)));
    return;
  }
  if (current !== v) return;
  const max = Number(m.version);
  const view = boardView(drawer);
  const slider = h("input", { id: "slider", type: "range", min: 1, max, value: max, step: 1 });
  const atLabel = h("span", { id: "at" });
  const info = h("div", { id: "replay-info" });
  const log = h("ol", { id: "log", class: "log" }, events.map((ev) => logItem(ev, m)));
  const stepTo = (n) => {
    slider.value = Math.max(1, Math.min(max, n));
    show(Number(slider.value));
  };
  const playBtn = h("button", {
    id: "play",
    onclick: () => {
      if (v.timer) {
        clearInterval(v.timer);
        v.timer = 0;
        playBtn.textContent = "▶ Play";
        return;
      }
      if (Number(slider.value) >= max) stepTo(1);
      playBtn.textContent = "❚❚ Pause";
      v.timer = setInterval(() => {
        if (Number(slider.value) >= max) {
          clearInterval(v.timer);
          v.timer = 0;
          playBtn.textContent = "▶ Play";
          return;
        }
        stepTo(Number(slider.value) + 1);
      }, 400);
    },
  }, "▶ Play");
  app.replaceChildren(
    h("div", { class: "match replay", id: "replay", dataset: { view: drawer ? drawer.kind : "generic" } },
      h("div", { class: "board-wrap" }, view),
      h("div", { class: "side" },
        h("h2", { id: "title" }, "Replay: ", titleOf(m.game), " ", h("small", {}, id)),
        h("p", {}, resultText(m), " ", h("a", { href: "#/match/" + id }, "live view")),
        h("div", { class: "scrub" },
          h("button", { id: "prev", onclick: () => stepTo(Number(slider.value) - 1) }, "◀"),
          slider,
          h("button", { id: "next", onclick: () => stepTo(Number(slider.value) + 1) }, "▶"),
          playBtn),
        h("p", {}, "After event ", atLabel, ` of ${max}`),
        info,
        errorBox(),
        h("h3", {}, "Events"),
        log)),
  );
  let want = 0;
  async function show(n) {
    want = n;
    atLabel.textContent = n;
    try {
      const at = (await api.getMatch(id, n)).match;
      if (want !== n || current !== v) return; // a later position was asked for meanwhile
      if (drawer) drawState(view, at, drawer, board, null);
      else showState(view, at);
      const ev = events[n - 1];
      const st = stateOf(at, drawer);
      let notation = null;
      if (drawer) notation = st ? h("pre", { id: "notation" }, st.notation) : h("p", {}, "Before the start: no board yet.");
      else if (!at.state) notation = h("p", {}, "Before the start: no state yet.");
      info.replaceChildren(
        h("p", { id: "replay-event" }, ev ? describeEvent(ev, m) : ""),
        seatList(at, drawer, board, at.status === "MATCH_STATUS_ACTIVE" ? at.turnSeat : -1),
      );
      if (notation) info.append(notation);
      if (drawer === CARCASSONNE && st) info.append(carcassonne.panel(st));
      for (const li of log.children) li.classList.toggle("current", li.dataset.seq === String(n));
      const cur = log.querySelector(".current");
      // Scroll the log only (scrollIntoView would scroll the page too).
      if (cur) log.scrollTop = cur.offsetTop - log.clientHeight / 2;
      document.getElementById("replay").dataset.version = n;
    } catch (err) {
      showError(err);
    }
  }
  slider.addEventListener("input", () => show(Number(slider.value)));
  log.addEventListener("click", (e) => {
    const li = e.target.closest("li");
    if (li) stepTo(Number(li.dataset.seq));
  });
  show(max);
}

window.addEventListener("hashchange", route);
route();
