// The watch across a server crash: the server is killed (SIGKILL) and
// restarted on its port while a spectator watches a match in play; the
// watch reconnects, resuming after the last event it yielded, and the
// spectator sees every event once, in order, to the end.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { v1 } from "../dist/index.js";
import { client, contiguous, controlUrl, createBotMatch, play, restart, restartUrl, seqs } from "./helpers.mjs";

const noRestart = restartUrl && controlUrl ? false : "HANGAR_RESTART_URL and HANGAR_CONTROL_URL are not set: run the Go test";

describe("a watch", { skip: noRestart }, () => {
  test("resumes across a server restart with no gap and no repeat", async () => {
    const hangar = client(restartUrl);
    const player = await hangar.createPlayer("Ada");
    const spectator = await hangar.createPlayer("Charles");
    const match = await createBotMatch(player);

    const watched = [];
    const reconnects = [];
    let restarted;
    const ac = new AbortController();
    const watching = (async () => {
      for await (const r of spectator.watch(match.matchId, {
        signal: ac.signal,
        onReconnect: (err, attempt) => reconnects.push(`${err.message} (attempt ${attempt})`),
      })) {
        watched.push(r);
        // Mid-match, once: kill the server under the open stream.
        if (watched.length === 20) {
          restarted = restart();
        }
      }
    })();
    let acted;
    try {
      acted = await play(player, match);
      await watching;
    } finally {
      ac.abort();
      await watching.catch(() => {});
      await restarted;
    }

    assert.ok(reconnects.length >= 1, "the watch reconnected");
    const { match: end } = await player.matches.getMatch({ matchId: match.matchId });
    assert.equal(end.status, v1.MatchStatus.FINISHED);
    assert.ok(acted > 0);
    const ns = seqs(watched);
    assert.equal(new Set(ns).size, ns.length, "no event twice");
    assert.ok(contiguous(ns), `seqs 1..n: ${ns.join(",")}`);
    assert.equal(BigInt(ns.length), end.version);
    console.log(`watched ${ns.length} events; reconnects: ${reconnects.join("; ")}`);
    player.close();
    spectator.close();
  });
});
