// Shared by the SDK's tests: a client of the server under test and a player
// who plays an Aeroplane match to the end. The servers come from the Go
// test (sdk_test.go): HANGAR_URL stays up; HANGAR_RESTART_URL is killed and
// restarted by a POST to HANGAR_CONTROL_URL/restart.
import { createConnectTransport } from "@connectrpc/connect-node";
import { Code, HangarError, aeroplane, createHangarClient, pack, v1 } from "../dist/index.js";

export const url = process.env.HANGAR_URL;
export const restartUrl = process.env.HANGAR_RESTART_URL;
export const controlUrl = process.env.HANGAR_CONTROL_URL;
/** tokenTTL is the servers' --token-ttl in milliseconds. */
export const tokenTTL = Number.parseFloat(process.env.HANGAR_TOKEN_TTL ?? "6") * 1000;
/** noServer skips a test when no server was given (npm test by hand). */
export const noServer = url ? false : "HANGAR_URL is not set: run the Go test in sdk/typescript (go test .)";

export function client(baseUrl = url) {
  return createHangarClient({ baseUrl, transport: createConnectTransport });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** restart kills the restartable server and starts it again on its port. */
export async function restart() {
  const r = await fetch(`${controlUrl}/restart`, { method: "POST" });
  if (!r.ok) {
    throw new Error(`restart: ${r.status} ${await r.text()}`);
  }
}

/**
 * createBotMatch creates an Aeroplane match of session's player against
 * a random bot, the server rolling the dice (auto_roll), and returns it.
 */
export async function createBotMatch(session) {
  const { match } = await session.matches.createMatch({
    game: "aeroplane",
    options: pack(aeroplane.OptionsSchema, { autoRoll: true }),
    seatCount: 2,
    botSeats: 1,
    botLevel: v1.BotLevel.RANDOM,
    requestId: crypto.randomUUID(),
  });
  return match;
}

/**
 * play plays session's seat of a match until it ends, taking the first
 * legal action whenever its watch says the seat is to act, and returns
 * how many actions it took. A call that fails for want of the server
 * (UNAVAILABLE, a broken connection) is made again with the same request
 * id, which the server applies once.
 */
export async function play(session, match) {
  const me = (await session.player()).playerId;
  const seat = match.seats.find((s) => s.playerId === me).seat;
  let acted = 0;
  for await (const r of session.watch(match.matchId)) {
    if (r.turnSeat !== seat || r.status !== v1.MatchStatus.ACTIVE) {
      continue;
    }
    const legal = await retry(() => session.moves.listLegalActions({ matchId: match.matchId }));
    if (legal.actions.length === 0) {
      continue;
    }
    const requestId = crypto.randomUUID();
    try {
      await retry(() =>
        session.moves.act({ matchId: match.matchId, expectedVersion: legal.version, requestId, action: legal.actions[0] }),
      );
      acted++;
    } catch (e) {
      if (!(e instanceof HangarError) || e.reason !== "VERSION_CONFLICT") {
        throw e;
      }
      // The watch is behind: a later event says whose turn it is.
    }
  }
  return acted;
}

async function retry(call) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      // A call to a server that is away is UNAVAILABLE; one whose
      // connection broke has a code but no reason of the server's.
      const down = e instanceof HangarError && (e.code === Code.Unavailable || (e.reason === "" && e.code !== Code.Unauthenticated));
      if (!down || attempt >= 40) {
        throw e;
      }
      await sleep(250);
    }
  }
}

/** seqs returns the sequence numbers of watched events, as numbers. */
export const seqs = (events) => events.map((r) => Number(r.event.seq));

/** contiguous says whether the numbers are 1, 2, … n. */
export const contiguous = (ns) => ns.every((n, i) => n === i + 1);
