// The hosted games' messages: listed by ListGames, packed and unpacked
// through the registry of the generated descriptors.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { aeroplane, carcassonne, gameTypes, pack, unpack, unpackAs, v1 } from "../dist/index.js";
import { client, noServer } from "./helpers.mjs";

describe("game messages", () => {
  test("pack and unpack round-trip a game's message", () => {
    const any = pack(aeroplane.MoveSchema, { kind: aeroplane.MoveKind.ADVANCE, plane: 2, fly: true });
    assert.equal(any.typeUrl, "type.googleapis.com/hangar.aeroplane.v1.Move");
    const move = unpack(any);
    assert.equal(move.$typeName, "hangar.aeroplane.v1.Move");
    assert.equal(move.plane, 2);
    assert.equal(unpackAs(any, aeroplane.MoveSchema).fly, true);
    assert.equal(unpackAs(any, carcassonne.MoveSchema), undefined, "not a Carcassonne move");
    assert.equal(unpack(undefined), undefined);
  });

  describe("against the server", { skip: noServer, concurrency: true }, () => {
    test("ListGames names types the SDK decodes", async () => {
      const games = await client().listGames();
      assert.deepEqual(
        games.map((g) => g.name),
        ["aeroplane", "carcassonne"],
      );
      for (const g of games) {
        const types = gameTypes(g);
        for (const k of ["options", "state", "board", "event"]) {
          assert.ok(types[k], `${g.name}: ${k} type ${g[k + "Type"]} is in the registry`);
        }
        assert.equal(types.actions.length, g.actionTypes.length, `${g.name}: every action type is in the registry`);
      }
    });

    test("a board, a match's options and state, and legal actions decode as the game's types", async () => {
      const hangar = client();
      const board = await hangar.board("aeroplane");
      assert.equal(board.$typeName, "hangar.aeroplane.v1.Board");
      assert.ok(board.squares.length > 0);

      const session = await hangar.createPlayer("Ada");
      const { match } = await session.matches.createMatch({
        game: "carcassonne",
        options: pack(carcassonne.OptionsSchema, { farmers: false }),
        seatCount: 2,
        botSeats: 1,
        botLevel: v1.BotLevel.RANDOM,
      });
      const options = unpackAs(match.options, carcassonne.OptionsSchema);
      assert.equal(options.farmers, false);
      const { match: got } = await session.matches.getMatch({ matchId: match.matchId });
      const state = unpack(got.state);
      assert.equal(state.$typeName, "hangar.carcassonne.v1.State");
      // The start may be the bot's turn: the match's first events are there
      // either way, and each game event decodes.
      const { events } = await session.matches.listMatchEvents({ matchId: match.matchId });
      assert.ok(events.length > 0);
      for (const e of events) {
        if (e.body.case === "game") {
          assert.equal(unpack(e.body.value).$typeName, "hangar.carcassonne.v1.Event");
        }
      }
      session.close();
    });
  });
});
