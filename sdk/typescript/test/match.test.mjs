// A whole Aeroplane match: a player plays its seat against a bot to the
// end while a spectator watches; the spectator sees every event once, in
// order, and decodes the game's events.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { aeroplane, gameEvent, v1 } from "../dist/index.js";
import { client, contiguous, createBotMatch, noServer, play, seqs } from "./helpers.mjs";

describe("a match", { skip: noServer }, () => {
  test("is played to the end and watched whole", async () => {
    const hangar = client();
    const player = await hangar.createPlayer("Ada");
    const spectator = await hangar.createPlayer("Charles");
    const match = await createBotMatch(player);

    const watched = [];
    const ac = new AbortController();
    const watching = (async () => {
      for await (const r of spectator.watch(match.matchId, { signal: ac.signal })) {
        watched.push(r);
      }
    })();
    let acted;
    try {
      acted = await play(player, match);
      await watching;
    } finally {
      ac.abort();
      await watching.catch(() => {});
    }

    const { match: end } = await player.matches.getMatch({ matchId: match.matchId });
    assert.equal(end.status, v1.MatchStatus.FINISHED);
    assert.ok(acted > 0, "the player acted");
    const ns = seqs(watched);
    assert.ok(contiguous(ns), `seqs 1..n: ${ns.join(",")}`);
    assert.equal(BigInt(ns.length), end.version);
    const last = watched.at(-1).event;
    assert.equal(last.body.case, "matchEnded");
    assert.equal(last.body.value.ranking.length, 2);

    const kinds = new Set();
    for (const r of watched) {
      const e = gameEvent(r.event);
      if (e) {
        assert.equal(e.$typeName, "hangar.aeroplane.v1.Event");
        kinds.add(e.kind);
      }
    }
    for (const k of [aeroplane.EventKind.ROLLED, aeroplane.EventKind.MOVED, aeroplane.EventKind.GAME_OVER]) {
      assert.ok(kinds.has(k), `a ${aeroplane.EventKind[k]} event`);
    }
    player.close();
    spectator.close();
  });

  test("a watch from afterSeq starts after it; an abort ends it", async () => {
    const hangar = client();
    const session = await hangar.createPlayer("Ada");
    const match = await createBotMatch(session);
    const ac = new AbortController();
    const got = [];
    await assert.rejects(
      (async () => {
        for await (const r of session.watch(match.matchId, { afterSeq: 2, signal: ac.signal })) {
          got.push(Number(r.event.seq));
          ac.abort(new Error("enough"));
        }
      })(),
      /enough/,
    );
    assert.deepEqual(got, [3]);
    session.close();
  });
});
