// The REST/JSON API of the server that served this page. Every call but
// CreatePlayer carries the bearer token kept in localStorage.

const TOKEN_KEY = "hangar.token";
const PLAYER_KEY = "hangar.player";

export function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

// player is the stored {playerId, displayName} of the token's player.
export function player() {
  try {
    return JSON.parse(localStorage.getItem(PLAYER_KEY) || "null");
  } catch {
    return null;
  }
}

export function forget() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(PLAYER_KEY);
}

// requestId is a fresh random id for a command (retries of one command
// reuse it; a new command gets a new one).
export function requestId() {
  return crypto.randomUUID();
}

// APIError is a refused call: the HTTP status and the google.rpc.Status.
export class APIError extends Error {
  constructor(httpStatus, body) {
    super((body && body.message) || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus;
    this.code = body && body.code;
    const info = ((body && body.details) || []).find((d) => d.reason);
    this.reason = info ? info.reason : "";
  }
}

export async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  const t = token();
  if (t) headers.Authorization = "Bearer " + t;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { message: text };
  }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

export async function createPlayer(displayName) {
  const r = await call("POST", "/v1/players", { displayName, requestId: requestId() });
  localStorage.setItem(TOKEN_KEY, r.token);
  localStorage.setItem(PLAYER_KEY, JSON.stringify(r.player));
  return r.player;
}

export const me = () => call("GET", "/v1/me");
// listGames lists the games the server hosts (GameService.ListGames).
export const listGames = () => call("GET", "/v1/games");
export const listMatches = (filter) => call("GET", `/v1/matches?filter=${filter}&page_size=50`);
export const getMatch = (id, atVersion) =>
  call("GET", `/v1/matches/${encodeURIComponent(id)}` + (atVersion ? `?at_version=${atVersion}` : ""));
export const createMatch = (req) => call("POST", "/v1/matches", { ...req, requestId: requestId() });
export const joinMatch = (id) => call("POST", `/v1/matches/${encodeURIComponent(id)}:join`, { requestId: requestId() });
export const leaveMatch = (id) => call("POST", `/v1/matches/${encodeURIComponent(id)}:leave`, { requestId: requestId() });
export const startMatch = (id) => call("POST", `/v1/matches/${encodeURIComponent(id)}:start`, { requestId: requestId() });
export const legalActions = (id) => call("GET", `/v1/matches/${encodeURIComponent(id)}/legalActions`);
// act plays action, one of the game's action messages as an Any in
// protojson ({"@type": "type.googleapis.com/<full name>", ...its fields}).
export const act = (id, expectedVersion, action) =>
  call("POST", `/v1/matches/${encodeURIComponent(id)}:act`, {
    expectedVersion: String(expectedVersion),
    requestId: requestId(),
    action,
  });
export const getBoard = (game) => call("GET", `/v1/games/${encodeURIComponent(game)}/board`);

// TYPE_PREFIX starts the type URL of every Any the server writes.
export const TYPE_PREFIX = "type.googleapis.com/";

// typeOf is the full message name of an Any in protojson
// ("hangar.aeroplane.v1.Move"), or "" for none.
export function typeOf(any) {
  const url = (any && any["@type"]) || "";
  return url.slice(url.lastIndexOf("/") + 1);
}

// pack is the Any of the message named type with fields.
export const pack = (type, fields = {}) => ({ "@type": TYPE_PREFIX + type, ...fields });

// fields is an Any's message without its "@type".
export function fields(any) {
  const { "@type": _, ...rest } = any || {};
  return rest;
}

// listEvents reads every stored event of a match, page by page.
export async function listEvents(id) {
  const out = [];
  let tok = "";
  for (;;) {
    const q = `page_size=1000` + (tok ? `&page_token=${encodeURIComponent(tok)}` : "");
    const r = await call("GET", `/v1/matches/${encodeURIComponent(id)}/events?${q}`);
    out.push(...(r.events || []));
    tok = r.nextPageToken;
    if (!tok) return out;
  }
}

// watch follows a match's NDJSON watch stream from afterSeq, calling onMsg
// with each WatchMatchResponse, and reconnects after the last seq seen
// when the stream breaks (the server drains, the network drops). It
// resolves when the match's stream ends (the match is over) or signal
// aborts.
export async function watch(id, afterSeq, onMsg, signal) {
  let seq = afterSeq;
  let backoff = 500;
  while (!signal.aborted) {
    try {
      const headers = { Accept: "application/x-ndjson", Authorization: "Bearer " + token() };
      const resp = await fetch(`/v1/matches/${encodeURIComponent(id)}:watch?after_seq=${seq}`, { headers, signal });
      if (!resp.ok) {
        const body = await resp.json().catch(() => null);
        throw new APIError(resp.status, body);
      }
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      let failed = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const msg = JSON.parse(line);
          if (msg.error) {
            failed = new APIError(503, msg.error);
            continue;
          }
          seq = Number(msg.event.seq);
          backoff = 500;
          onMsg(msg);
        }
      }
      if (!failed) return; // the match ended: the stream is complete
    } catch (err) {
      if (signal.aborted) return;
      // A refusal that retrying cannot fix ends the watch.
      if (err instanceof APIError && [400, 401, 403, 404].includes(err.httpStatus)) throw err;
    }
    await new Promise((r) => setTimeout(r, backoff));
    backoff = Math.min(backoff * 2, 8000);
  }
}
