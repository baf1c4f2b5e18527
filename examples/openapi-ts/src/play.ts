// A Hangar client generated from the OpenAPI document alone: the types are
// openapi-typescript's, from openapi/openapi.yaml (npm run gen), and every
// call is openapi-fetch's, checked against them by tsc. It lists the games
// the server hosts, registers two players, plays an Aeroplane Chess match
// to the end as one of them against a bot, and has the other read the
// match's NDJSON watch stream as a spectator.
//
//   npm ci && npm run gen && npm run build
//   node dist/play.js --addr 127.0.0.1:7350     (or HANGAR_ADDR=…)
//
// Nothing in it comes from proto/ or from Hangar's SDK: what the document
// says is enough. It exits 1 on any failure.

import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import createClient from 'openapi-fetch';
import type { components, paths } from './gen/schema.js';

type Schemas = components['schemas'];
type Status = Schemas['google.rpc.Status'];
type WatchMatchResponse = Schemas['hangar.v1.WatchMatchResponse'];
// A game's messages are schemas of their own: the document of a node
// names the messages of every game it hosts.
type AeroplaneEvent = Schemas['hangar.aeroplane.v1.Event'];
type AeroplaneOptions = Schemas['hangar.aeroplane.v1.Options'];

const { values: flags } = parseArgs({
  options: { addr: { type: 'string', default: process.env.HANGAR_ADDR || '127.0.0.1:7350' } },
});
const baseUrl = `http://${flags.addr}`;

// aeroplane is the type URL prefix of Aeroplane Chess's messages.
const aeroplane = 'type.googleapis.com/hangar.aeroplane.v1.';

// ABORTED is the gRPC code of a stale expected_version (HTTP 409).
const ABORTED = 10;

// HangarError is an error answer: its google.rpc.Status code and message,
// and the reason of its ErrorInfo.
class HangarError extends Error {
  code?: number;
  reason?: string;
  constructor(what: string, status: Status | undefined) {
    const info = status?.details?.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
    const reason = info && 'reason' in info ? String(info.reason) : undefined;
    super(`${what}: ${status?.message} (code ${status?.code}${reason ? `, ${reason}` : ''})`);
    this.code = status?.code;
    this.reason = reason;
  }
}

// must returns a call's answer, or throws its error.
function must<T>(what: string, r: { data?: T; error?: Status }): T {
  if (r.error !== undefined || r.data === undefined) throw new HangarError(what, r.error);
  return r.data;
}

// anonymous calls need no token; as(token) calls as a player.
const anonymous = createClient<paths>({ baseUrl });
const as = (token: string) => createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
type Client = ReturnType<typeof as>;

// watch yields a match's WatchMatchResponses after afterSeq, one JSON line
// each (application/x-ndjson), and ends after the match's last event. A
// failure after the first event comes as a last line {"error": Status}.
async function* watch(client: Client, matchId: string, afterSeq = 0): AsyncGenerator<WatchMatchResponse> {
  const { data, error } = await client.GET('/v1/matches/{matchId}:watch', {
    params: { path: { matchId }, query: { afterSeq: String(afterSeq) } },
    parseAs: 'stream',
  });
  if (error !== undefined || !data) throw new HangarError('WatchMatch', error);
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of data as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line === '') continue;
      const w = JSON.parse(line) as WatchMatchResponse & { error?: Status };
      if (w.error) throw new HangarError('WatchMatch', w.error);
      yield w;
    }
  }
}

// createPlayer registers a player and returns its id and a client that
// calls as it. The random request id makes the call safe to retry.
async function createPlayer(name: string): Promise<{ id: string; client: Client }> {
  const r = must('CreatePlayer', await anonymous.POST('/v1/players', { body: { displayName: name, requestId: randomUUID() } }));
  return { id: r.player?.playerId ?? '', client: as(r.token ?? '') };
}

// play plays seat until the match ends, acting on what the watch stream
// says after each event, and counts its rolls and moves.
async function play(client: Client, matchId: string, seat: number): Promise<{ rolls: number; moves: number }> {
  // acted is the version our last command reached: one command appends
  // several events, and the ones before its last are already history.
  let acted = 0;
  let rolls = 0;
  let moves = 0;
  for await (const w of watch(client, matchId)) {
    // turnSeat is absent when no seat is to act.
    if (Number(w.version) < acted || w.turnSeat !== seat) continue;
    try {
      const legal = must('ListLegalActions', await client.GET('/v1/matches/{matchId}/legalActions', { params: { path: { matchId } } }));
      const action = legal.actions?.[0];
      if (action === undefined) continue; // the match moved on
      // The action goes back as it came, "@type" and all.
      const r = must('Act', await client.POST('/v1/matches/{matchId}:act', {
        params: { path: { matchId } },
        body: { expectedVersion: legal.version, requestId: randomUUID(), action },
      }));
      acted = Number(r.version);
      if (action['@type'] === `${aeroplane}Roll`) rolls++;
      if (action['@type'] === `${aeroplane}Move`) moves++;
    } catch (err) {
      // ABORTED: the match had moved on past this event (one in the middle
      // of a command); the next event says where it stands.
      if (!(err instanceof HangarError) || err.code !== ABORTED) throw err;
    }
  }
  // The stream ends after the match's last event.
  return { rolls, moves };
}

// spectate reads a match's watch from its first event to its end, checks
// that every event comes once, in order, and returns how many it saw and
// how many of them were the game's ROLLED events.
async function spectate(client: Client, matchId: string): Promise<{ events: number; rolls: number }> {
  let events = 0;
  let rolls = 0;
  for await (const w of watch(client, matchId, 0)) {
    const seq = Number(w.event?.seq);
    if (seq !== events + 1 || Number(w.version) !== seq) {
      throw new Error(`spectator: event ${seq} (version ${w.version}) after event ${events}`);
    }
    events = seq;
    // A game's event is its own message, with its "@type".
    const g = w.event?.game;
    if (g?.['@type'] === `${aeroplane}Event` && (g as AeroplaneEvent).kind === 'EVENT_KIND_ROLLED') rolls++;
  }
  return { events, rolls };
}

async function main(): Promise<void> {
  // ListGames needs no token (the document's security: []): every hosted
  // game, by name, with the names of its message types.
  const { games } = must('ListGames', await anonymous.GET('/v1/games'));
  for (const g of games ?? []) {
    console.log(`game ${g.name}: ${g.title}, ${g.minSeats} to ${g.maxSeats} seats, options ${g.optionsType}`);
  }

  const ada = await createPlayer('Ada');
  const bob = await createPlayer('Bob');

  // Ada takes a seat and a bot the other; the match is full, so it starts.
  // The options are the game's own message: "@type" and its fields.
  const firstPlayer: AeroplaneOptions['firstPlayer'] = 'FIRST_PLAYER_SEAT0';
  const { match } = must('CreateMatch', await ada.client.POST('/v1/matches', {
    body: {
      game: 'aeroplane',
      seatCount: 2,
      botSeats: 1,
      requestId: randomUUID(),
      options: { '@type': `${aeroplane}Options`, firstPlayer },
    },
  }));
  const id = match?.matchId ?? '';
  const seat = match?.seats?.find((s) => s.playerId === ada.id)?.seat ?? -1;
  console.log(`match ${id}: Ada plays seat ${seat} against a bot`);

  const [mine, seen] = await Promise.all([play(ada.client, id, seat), spectate(bob.client, id)]);

  const got = must('GetMatch', await ada.client.GET('/v1/matches/{matchId}', { params: { path: { matchId: id } } }));
  const m = got.match;
  const version = Number(m?.version);
  if (m?.status !== 'MATCH_STATUS_FINISHED') throw new Error(`match is ${m?.status}, want FINISHED`);
  if (seen.events !== version) throw new Error(`spectator saw ${seen.events} events, the match has ${version}`);
  if (seen.rolls < mine.rolls) throw new Error(`spectator saw ${seen.rolls} rolls, Ada rolled ${mine.rolls} times`);
  console.log(`match ${id}: ${m.status} at version ${version}`);
  for (const s of [...(m.seats ?? [])].sort((a, b) => (a.place ?? 0) - (b.place ?? 0))) {
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
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
} finally {
  clearTimeout(timeout);
}
