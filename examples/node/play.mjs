// A Hangar client in Node.js over REST/JSON: it lists the games the server
// hosts, registers two players, plays an Aeroplane Chess match to the end
// as one of them against a bot, and has the other watch the match as a
// spectator.
//
//   node play.mjs --addr 127.0.0.1:7350     (or HANGAR_ADDR=…)
//
// It needs nothing but Node.js 18 or later: every call is fetch on the
// RPC's REST mapping (its google.api.http rule in proto/), and the watch is
// newline-delimited JSON. A game's own messages (options, state, actions,
// events) are google.protobuf.Any: in JSON an object whose "@type" names
// the message, next to the message's fields.
//
// The player learns the match's version and whose turn it is from its watch
// stream, and acts when the turn is its own: ListLegalActions, then Act
// with one of them as it came (a Roll while it must roll, else one of its
// Moves). The spectator watches from the first event and checks that it saw
// every event once, in order. It exits 1 on any failure.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values: flags } = parseArgs({
  options: { addr: { type: 'string', default: process.env.HANGAR_ADDR || '127.0.0.1:7350' } },
});
const base = `http://${flags.addr}`;

// aeroplane is the type URL prefix of Aeroplane Chess's messages.
const aeroplane = 'type.googleapis.com/hangar.aeroplane.v1.';

// ABORTED is the gRPC code of a stale expected_version (HTTP 409).
const ABORTED = 10;

// HangarError is an error answer: its google.rpc.Status code and message,
// and the reason of its ErrorInfo.
class HangarError extends Error {
  constructor(what, status) {
    const info = (status.details ?? []).find((d) => d['@type']?.endsWith('/google.rpc.ErrorInfo'));
    super(`${what}: ${status.message} (code ${status.code}${info ? `, ${info.reason}` : ''})`);
    this.code = status.code;
    this.reason = info?.reason;
  }
}

// api calls one REST endpoint as the player of token (if any) and returns
// its JSON answer. Answers use lowerCamelCase names, enums by name and
// 64-bit integers as strings; every field is present, zero values included.
async function api(method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body && JSON.stringify(body) });
  const answer = await res.json();
  if (!res.ok) throw new HangarError(`${method} ${path}`, answer);
  return answer;
}

// watch yields a match's WatchMatchResponses after afterSeq, and ends after
// the match's last event. A failure after the first event comes as a last
// line {"error": Status}.
async function* watch(token, matchId, afterSeq = 0) {
  const path = `/v1/matches/${matchId}:watch?after_seq=${afterSeq}`;
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new HangarError(`GET ${path}`, await res.json());
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line === '') continue;
      const w = JSON.parse(line);
      if (w.error) throw new HangarError(`GET ${path}`, w.error);
      yield w;
    }
  }
}

// createPlayer registers a player and returns its id and token. The random
// request id makes the call safe to retry.
async function createPlayer(name) {
  const r = await api('POST', '/v1/players', { body: { displayName: name, requestId: randomUUID() } });
  return { id: r.player.playerId, token: r.token };
}

// play plays seat until the match ends, acting on what the watch stream
// says after each event, and counts its rolls and moves.
async function play(token, matchId, seat) {
  // acted is the version our last command reached: one command appends
  // several events, and the ones before its last are already history.
  let acted = 0;
  let rolls = 0;
  let moves = 0;
  for await (const w of watch(token, matchId)) {
    // turnSeat is absent when no seat is to act.
    if (Number(w.version) < acted || w.turnSeat !== seat) continue;
    try {
      const legal = await api('GET', `/v1/matches/${matchId}/legalActions`, { token });
      if (legal.actions.length === 0) continue; // the match moved on
      // The action goes back as it came, "@type" and all.
      const action = legal.actions[0];
      const r = await api('POST', `/v1/matches/${matchId}:act`, {
        token,
        body: { expectedVersion: legal.version, requestId: randomUUID(), action },
      });
      acted = Number(r.version);
      if (action['@type'] === `${aeroplane}Roll`) rolls++;
      if (action['@type'] === `${aeroplane}Move`) moves++;
    } catch (err) {
      // ABORTED: the match had moved on past this event (one in the middle
      // of a command); the next event says where it stands.
      if (err.code !== ABORTED) throw err;
    }
  }
  // The stream ends after the match's last event.
  return { rolls, moves };
}

// spectate watches a match from its first event to its end, checks that
// every event comes once, in order, and returns how many it saw and how
// many of them were the game's ROLLED events.
async function spectate(token, matchId) {
  let events = 0;
  let rolls = 0;
  for await (const w of watch(token, matchId, 0)) {
    const seq = Number(w.event.seq);
    if (seq !== events + 1 || Number(w.version) !== seq) {
      throw new Error(`spectator: event ${seq} (version ${w.version}) after event ${events}`);
    }
    events = seq;
    // A game's event is its own message, with its "@type".
    const g = w.event.game;
    if (g?.['@type'] === `${aeroplane}Event` && g.kind === 'EVENT_KIND_ROLLED') rolls++;
  }
  return { events, rolls };
}

async function main() {
  // GET /v1/games needs no token: every hosted game, by name, with the
  // names of its message types.
  const { games } = await api('GET', '/v1/games');
  for (const g of games) {
    console.log(`game ${g.name}: ${g.title}, ${g.minSeats} to ${g.maxSeats} seats, options ${g.optionsType}`);
  }

  const ada = await createPlayer('Ada');
  const bob = await createPlayer('Bob');

  // Ada takes a seat and a bot the other; the match is full, so it starts.
  // The options are the game's own message: "@type" and its fields.
  const { match } = await api('POST', '/v1/matches', {
    token: ada.token,
    body: {
      game: 'aeroplane',
      seatCount: 2,
      botSeats: 1,
      requestId: randomUUID(),
      options: { '@type': `${aeroplane}Options`, firstPlayer: 'FIRST_PLAYER_SEAT0' },
    },
  });
  const id = match.matchId;
  const seat = match.seats.find((s) => s.playerId === ada.id).seat;
  console.log(`match ${id}: Ada plays seat ${seat} against a bot`);

  const [mine, seen] = await Promise.all([play(ada.token, id, seat), spectate(bob.token, id)]);

  const { match: m } = await api('GET', `/v1/matches/${id}`, { token: ada.token });
  const version = Number(m.version);
  if (m.status !== 'MATCH_STATUS_FINISHED') throw new Error(`match is ${m.status}, want FINISHED`);
  if (seen.events !== version) throw new Error(`spectator saw ${seen.events} events, the match has ${version}`);
  if (seen.rolls < mine.rolls) throw new Error(`spectator saw ${seen.rolls} rolls, Ada rolled ${mine.rolls} times`);
  console.log(`match ${id}: ${m.status} at version ${version}`);
  for (const s of [...m.seats].sort((a, b) => a.place - b.place)) {
    const name = s.status === 'SEAT_STATUS_BOT' ? 'bot' : s.displayName;
    console.log(`  place ${s.place}: seat ${s.seat} (${name})`);
  }
  console.log(`Ada: ${mine.rolls} rolls, ${mine.moves} moves`);
  console.log(`spectator: saw ${seen.events} events, 1..${version} in order, each once`);
  console.log(`spectator: ${seen.rolls} of them the die's rolls`);
}

const timeout = setTimeout(() => {
  console.error('timed out after 2 minutes');
  process.exit(1);
}, 120_000);
try {
  await main();
} catch (err) {
  console.error(err.message ?? err);
  process.exitCode = 1;
} finally {
  clearTimeout(timeout);
}
