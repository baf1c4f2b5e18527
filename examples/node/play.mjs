// A Hangar client in Node.js: it registers two players, plays an Aeroplane
// Chess match to the end as one of them against a bot, and has the other
// watch the match as a spectator.
//
//   npm ci && node play.mjs --addr 127.0.0.1:7350     (or HANGAR_ADDR=…)
//
// The player learns the match's version, whose turn it is and the phase
// from its watch stream, and acts when the turn is its own: Roll, or
// ListLegalMoves and Move. The spectator watches from the first event and
// checks that it saw every event once, in order. It exits 1 on any failure.

import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

const { values: flags } = parseArgs({
  options: { addr: { type: 'string', default: process.env.HANGAR_ADDR || '127.0.0.1:7350' } },
});

// The .proto files are read at run time from the repository's proto/
// directory (the googleapis annotations are vendored there too).
const definition = protoLoader.loadSync(
  ['hangar/v1/player.proto', 'hangar/v1/match.proto', 'hangar/v1/move.proto'],
  {
    includeDirs: [fileURLToPath(new URL('../../proto', import.meta.url))],
    keepCase: true, // field names as in the .proto: match_id, expected_version
    longs: Number, // int64 versions and sequence numbers as numbers
    enums: String, // 'GAME_AEROPLANE'
    defaults: true, // zero values present: seat 0 is 0, not missing
    oneofs: true,
  },
);
const v1 = grpc.loadPackageDefinition(definition).hangar.v1;

const creds = grpc.credentials.createInsecure();
const players = new v1.PlayerService(flags.addr, creds);
const matches = new v1.MatchService(flags.addr, creds);
const moves = new v1.MoveService(flags.addr, creds);

// call makes a unary call and returns a promise of its answer.
function call(client, method, request, metadata = new grpc.Metadata()) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

// createPlayer registers a player and returns its id and the metadata that
// authenticates its calls. The random request id makes the call safe to retry.
async function createPlayer(name) {
  const r = await call(players, 'CreatePlayer', { display_name: name, request_id: randomUUID() });
  const auth = new grpc.Metadata();
  auth.set('authorization', `Bearer ${r.token}`);
  return { id: r.player.player_id, auth };
}

// play plays seat until the match ends, acting on what the watch stream
// says after each event.
async function play(auth, matchId, seat) {
  // acted is the version our last command reached: one command appends
  // several events, and the ones before its last are already history.
  let acted = 0;
  for await (const w of matches.WatchMatch({ match_id: matchId }, auth)) {
    // turn_seat is absent (undefined) when no seat is to act.
    if (w.version < acted || w.turn_seat !== seat) continue;
    try {
      if (w.phase === 'start' || w.phase === 'roll') {
        const r = await call(moves, 'Roll',
          { match_id: matchId, expected_version: w.version, request_id: randomUUID() }, auth);
        acted = r.version;
      } else if (w.phase === 'move') {
        const legal = await call(moves, 'ListLegalMoves', { match_id: matchId }, auth);
        if (legal.moves.length === 0) continue; // the match moved on
        const r = await call(moves, 'Move', {
          match_id: matchId, expected_version: legal.version, request_id: randomUUID(),
          move: legal.moves[0],
        }, auth);
        acted = r.version;
      }
    } catch (err) {
      // ABORTED: the match had moved on past this event (one in the middle
      // of a command); the next event says where it stands.
      if (err.code !== grpc.status.ABORTED) throw err;
    }
  }
  // The stream ends (OK) after the match's last event.
}

// spectate watches a match from its first event to its end, checks that
// every event comes once, in order, and returns how many it saw.
async function spectate(auth, matchId) {
  let last = 0;
  for await (const w of matches.WatchMatch({ match_id: matchId, after_seq: 0 }, auth)) {
    const seq = w.event.seq;
    if (seq !== last + 1 || w.version !== seq) {
      throw new Error(`spectator: event ${seq} (version ${w.version}) after event ${last}`);
    }
    last = seq;
  }
  return last;
}

async function main() {
  const ada = await createPlayer('Ada');
  const bob = await createPlayer('Bob');

  // Ada takes a seat and a bot the other; the match is full, so it starts.
  const { match } = await call(matches, 'CreateMatch', {
    game: 'GAME_AEROPLANE',
    seat_count: 2,
    bot_seats: 1,
    request_id: randomUUID(),
    options: { aeroplane: { first_player: 'FIRST_PLAYER_SEAT0' } },
  }, ada.auth);
  const id = match.match_id;
  const seat = match.seats.find((s) => s.player_id === ada.id).seat;
  console.log(`match ${id}: Ada plays seat ${seat} against a bot`);

  const [, events] = await Promise.all([play(ada.auth, id, seat), spectate(bob.auth, id)]);

  const { match: m } = await call(matches, 'GetMatch', { match_id: id }, ada.auth);
  if (m.status !== 'MATCH_STATUS_FINISHED') throw new Error(`match is ${m.status}, want FINISHED`);
  if (events !== m.version) throw new Error(`spectator saw ${events} events, the match has ${m.version}`);
  console.log(`match ${id}: ${m.status} at version ${m.version}`);
  for (const s of m.seats.toSorted((a, b) => a.place - b.place)) {
    const name = s.status === 'SEAT_STATUS_BOT' ? 'bot' : s.display_name;
    console.log(`  place ${s.place}: seat ${s.seat} (${name})`);
  }
  console.log(`spectator: saw ${events} events, 1..${m.version} in order, each once`);
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
  for (const c of [players, matches, moves]) c.close();
}
