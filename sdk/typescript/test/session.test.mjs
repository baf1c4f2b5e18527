// Sign-in and sessions: tokens refreshed before they expire, an expired
// token renewed, a revoked one refused with its reason.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Code, HangarError, v1 } from "../dist/index.js";
import { client, contiguous, noServer, seqs, sleep, tokenTTL } from "./helpers.mjs";

const apiKey = process.env.HANGAR_API_KEY;

describe("sessions", { skip: noServer, concurrency: true }, () => {
  test("createPlayer signs in; the session refreshes its token before it expires", async () => {
    const hangar = client();
    const tokens = [];
    const session = await hangar.createPlayer("Ada", { onToken: (t) => tokens.push(t) });
    const first = session.token;
    assert.ok(first.expireTime > new Date(), "the token expires in the future");
    const player = await session.player();
    assert.equal(player.displayName, "Ada");

    // Past the first token's expiry: the session's timer refreshed it.
    await sleep(tokenTTL * 1.3);
    const { player: again } = await session.players.getPlayer({});
    assert.equal(again.playerId, player.playerId);
    assert.notEqual(session.token.token, first.token);
    assert.ok(tokens.length >= 1, "onToken was told of the new token");
    assert.equal(tokens.at(-1).token, session.token.token);
    session.close();
  });

  test("a call made with an expired token renews it and is made again", async () => {
    const hangar = client();
    const old = await hangar.createPlayer("Grace");
    old.close(); // no refresh: let the token expire
    await sleep(tokenTTL + 1000);

    // The session believes the token good for an hour (a clock that is
    // wrong): the server says TOKEN_EXPIRED, and renew answers.
    let renewals = 0;
    const session = hangar.resume(
      { token: old.token.token, expireTime: new Date(Date.now() + 3600_000) },
      {
        renew: async () => {
          renewals++;
          const fresh = await hangar.createPlayer("Grace again");
          fresh.close();
          return fresh.token;
        },
      },
    );
    const { player } = await session.players.getPlayer({});
    assert.equal(player.displayName, "Grace again");
    assert.equal(renewals, 1);

    // Without renew, the call ends with the reason.
    const stale = hangar.resume({ token: old.token.token, expireTime: new Date(Date.now() + 3600_000) });
    await assert.rejects(stale.players.getPlayer({}), (e) => {
      assert.ok(e instanceof HangarError);
      assert.equal(e.code, Code.Unauthenticated);
      assert.equal(e.reason, "TOKEN_EXPIRED");
      return true;
    });
    session.close();
    stale.close();
  });

  test("a watch outlives its token: the server carries it on with the refreshed one", async () => {
    const hangar = client();
    const host = await hangar.createPlayer("Ada");
    const guest = await hangar.createPlayer("Grace");
    const spectator = await hangar.createPlayer("Charles");
    const { match } = await host.matches.createMatch({ game: "aeroplane", seatCount: 2 });

    const ac = new AbortController();
    const watched = [];
    const reasons = [];
    const watching = (async () => {
      const options = { signal: ac.signal, onReconnect: (err) => reasons.push(err.reason) };
      for await (const r of spectator.watch(match.matchId, options)) {
        watched.push(r);
        if (r.event.body.case === "matchStarted") {
          ac.abort(new Error("started"));
        }
      }
    })().then(
      () => "ended",
      (e) => e.message,
    );
    // The stream opened with the spectator's first token, which the session
    // refreshes and which then expires while the lobby waits; the server
    // carries the stream on with the refreshed token past its re-check of
    // sessions (5 s), so the watch never reconnects. Then the guest joins
    // and the match starts.
    await sleep(tokenTTL + 7_000);
    await guest.matches.joinMatch({ matchId: match.matchId, requestId: crypto.randomUUID() });
    assert.equal(await watching, "started");

    assert.deepEqual(reasons, [], `the watch reconnected: ${reasons}`);
    const ns = seqs(watched);
    assert.ok(contiguous(ns), `seqs 1..n: ${ns.join(",")}`);
    assert.equal(watched.at(-1).status, v1.MatchStatus.ACTIVE);
    for (const s of [host, guest, spectator]) {
      s.close();
    }
  });

  test("a backend signs in its user with its API key: one player per external id", { skip: !apiKey && "HANGAR_API_KEY is not set" }, async () => {
    const hangar = client();
    const first = await hangar.signInExternal(apiKey, "user-42", "Ada");
    const again = await hangar.signInExternal(apiKey, "user-42", "Ada");
    const p1 = await first.player();
    const p2 = await again.player();
    assert.equal(p1.displayName, "Ada");
    assert.equal(p1.playerId, p2.playerId);
    assert.notEqual(first.token.token, again.token.token);
    // The key is not a player's token.
    await assert.rejects(hangar.resume({ token: apiKey, expireTime: new Date(Date.now() + 3600_000) }).players.getPlayer({}), {
      code: Code.PermissionDenied,
      reason: "API_KEY_NOT_A_PLAYER",
    });
    first.close();
    again.close();
  });

  test("a revoked session's token is refused with TOKEN_REVOKED", async () => {
    const hangar = client();
    const session = await hangar.createPlayer("Linus");
    const token = session.token;
    await session.revoke();
    const after = hangar.resume(token);
    await assert.rejects(after.players.getPlayer({}), { code: Code.Unauthenticated, reason: "TOKEN_REVOKED" });
    after.close();
  });
});
