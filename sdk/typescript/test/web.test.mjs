// The browser's transport: @connectrpc/connect-web over fetch (which
// Node.js has too) in the JSON format, whose Any fields the SDK's registry
// writes and reads. A browser bundle uses the SDK exactly so.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createConnectTransport } from "@connectrpc/connect-web";
import { aeroplane, createHangarClient, newRequestId, pack, unpackAs, v1 } from "../dist/index.js";
import { noServer, url } from "./helpers.mjs";

describe("the browser's transport (connect-web, JSON)", { skip: noServer }, () => {
  test("signs in, creates a match with a game's options, reads its state and watches it", async () => {
    const hangar = createHangarClient({
      baseUrl: url,
      transport: createConnectTransport,
      transportOptions: { useBinaryFormat: false },
    });
    const games = await hangar.listGames();
    assert.ok(games.some((g) => g.name === "aeroplane"));

    const session = await hangar.createPlayer("Ada");
    const { match } = await session.matches.createMatch({
      game: "aeroplane",
      options: pack(aeroplane.OptionsSchema, { autoRoll: true }),
      seatCount: 2,
      botSeats: 1,
      requestId: newRequestId(),
    });
    assert.equal(unpackAs(match.options, aeroplane.OptionsSchema).autoRoll, true);
    const { match: got } = await session.matches.getMatch({ matchId: match.matchId });
    assert.equal(unpackAs(got.state, aeroplane.StateSchema).$typeName, "hangar.aeroplane.v1.State");

    // The server-streaming watch over fetch: the stored events, in order.
    const ac = new AbortController();
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const r of session.watch(match.matchId, { signal: ac.signal })) {
          seen.push(Number(r.event.seq));
          if (r.status === v1.MatchStatus.ACTIVE) {
            ac.abort(new Error("active"));
          }
        }
      })(),
      /active/,
    );
    assert.deepEqual(
      seen,
      seen.map((_, i) => i + 1),
    );
    session.close();
  });

  test("newRequestId makes distinct UUIDv4s", () => {
    const ids = new Set(Array.from({ length: 100 }, newRequestId));
    assert.equal(ids.size, 100);
    for (const id of ids) {
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});
