// Typed errors: a refused call is a HangarError whose code and reason are
// the server's, with the reason's metadata.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Code, HangarError, aeroplane, carcassonne, pack } from "../dist/index.js";
import { client, createBotMatch, noServer } from "./helpers.mjs";

describe("errors", { skip: noServer, concurrency: true }, () => {
  test("a stale expected version is ABORTED, VERSION_CONFLICT, with the current version", async () => {
    const session = await client().createPlayer("Edsger");
    const match = await createBotMatch(session);
    await assert.rejects(
      session.moves.act({
        matchId: match.matchId,
        expectedVersion: 1n,
        requestId: crypto.randomUUID(),
        action: pack(aeroplane.MoveSchema, { kind: aeroplane.MoveKind.TAKE_OFF }),
      }),
      (e) => {
        assert.ok(e instanceof HangarError, "a HangarError");
        assert.equal(e.code, Code.Aborted);
        assert.equal(e.reason, "VERSION_CONFLICT");
        assert.equal(e.domain, "hangar");
        assert.ok(Number(e.metadata.current_version) > 1, `current_version ${e.metadata.current_version}`);
        return true;
      },
    );
    session.close();
  });

  test("a game the server does not host is INVALID_ARGUMENT, UNKNOWN_GAME", async () => {
    const session = await client().createPlayer("Barbara");
    await assert.rejects(session.matches.createMatch({ game: "aeroplain", seatCount: 2 }), {
      code: Code.InvalidArgument,
      reason: "UNKNOWN_GAME",
    });
    session.close();
  });

  test("another game's action is INVALID_ARGUMENT, UNKNOWN_TYPE", async () => {
    const session = await client().createPlayer("Tony");
    const match = await createBotMatch(session);
    // The bot may move first: a VERSION_CONFLICT names the version to act at.
    let version = match.version;
    for (let attempt = 0; ; attempt++) {
      try {
        await session.moves.act({
          matchId: match.matchId,
          expectedVersion: version,
          requestId: crypto.randomUUID(),
          action: pack(carcassonne.MoveSchema, {}),
        });
        assert.fail("the action was taken");
      } catch (e) {
        if (e.reason === "VERSION_CONFLICT" && attempt < 10) {
          version = BigInt(e.metadata.current_version);
          continue;
        }
        assert.ok(e instanceof HangarError, `a HangarError: ${e}`);
        assert.equal(e.code, Code.InvalidArgument);
        assert.equal(e.reason, "UNKNOWN_TYPE");
        break;
      }
    }
    session.close();
  });

  test("an unknown match is NOT_FOUND", async () => {
    const session = await client().createPlayer("Niklaus");
    await assert.rejects(session.matches.getMatch({ matchId: "no-such-match" }), (e) => {
      assert.ok(e instanceof HangarError);
      assert.ok(e.code === Code.NotFound || e.code === Code.InvalidArgument, `code ${Code[e.code]}`);
      assert.notEqual(e.reason, "");
      return true;
    });
    session.close();
  });
});
