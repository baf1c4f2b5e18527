// The watch's resumption against a scripted server (Connect's in-memory
// router, no network): what it yields when streams break, repeat an event
// or skip one, and which errors end it. Runs without a Hangar server.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { ErrorInfoSchema } from "../dist/gen/google/rpc/error_details_pb.js";
import { createHangarClient, v1 } from "../dist/index.js";

const event = (seq) => ({ event: { matchId: "m", seq: BigInt(seq) }, version: BigInt(seq) });

const refused = (code, reason) => {
  const err = new ConnectError("refused", code);
  err.details.push({ desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, domain: "hangar" }) });
  return err;
};

/**
 * session returns a session whose MatchService.WatchMatch plays the
 * scripts in turn: each is the seqs to send, then an error to end with (or
 * none: the match is over). It records each stream's after_seq.
 */
function session(scripts, expireTime = new Date(Date.now() + 3600_000)) {
  const asked = [];
  const transport = createRouterTransport((router) =>
    router.service(v1.MatchService, {
      async *watchMatch(req) {
        asked.push(Number(req.afterSeq));
        const { seqs, end } = scripts.shift() ?? { seqs: [], end: new ConnectError("no more scripts", Code.Internal) };
        for (const s of seqs) {
          yield event(s);
        }
        if (end) {
          throw end;
        }
      },
    }),
  );
  const s = createHangarClient({ transport }).resume({ token: "t", expireTime });
  return { s, asked };
}

async function collect(it) {
  const got = [];
  for await (const r of it) {
    got.push(Number(r.event.seq));
  }
  return got;
}

describe("watch resumption", () => {
  test("a broken stream resumes after the last event yielded; a repeated event is dropped", async () => {
    const { s, asked } = session([
      { seqs: [1, 2, 3], end: new ConnectError("socket hang up", Code.Aborted) },
      { seqs: [3, 4], end: refused(Code.Unavailable, "UNAVAILABLE") },
      { seqs: [5, 6] },
    ]);
    const reconnects = [];
    const got = await collect(s.watch("m", { minDelayMs: 1, onReconnect: (e, n) => reconnects.push([e.code, n]) }));
    assert.deepEqual(got, [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(asked, [0, 3, 4]);
    assert.deepEqual(reconnects, [
      [Code.Aborted, 1],
      [Code.Unavailable, 1],
    ]);
    s.close();
  });

  test("afterSeq is where the first stream starts", async () => {
    const { s, asked } = session([{ seqs: [8, 9] }]);
    assert.deepEqual(await collect(s.watch("m", { afterSeq: 7 })), [8, 9]);
    assert.deepEqual(asked, [7]);
    s.close();
  });

  test("a skipped event is a SEQUENCE_GAP", async () => {
    const { s } = session([{ seqs: [1, 3] }]);
    await assert.rejects(collect(s.watch("m")), { code: Code.DataLoss, reason: "SEQUENCE_GAP" });
    s.close();
  });

  test("a refusal with a reason ends the watch with it", async () => {
    const { s, asked } = session([{ seqs: [1], end: refused(Code.PermissionDenied, "MATCH_PRIVATE") }]);
    await assert.rejects(collect(s.watch("m", { minDelayMs: 1 })), { code: Code.PermissionDenied, reason: "MATCH_PRIVATE" });
    assert.deepEqual(asked, [0]);
    s.close();
  });

  test("a falling-behind watcher resumes; too many failures in a row end it", async () => {
    const down = () => ({ seqs: [], end: refused(Code.Unavailable, "UNAVAILABLE") });
    const { s, asked } = session([{ seqs: [1], end: refused(Code.ResourceExhausted, "SLOW_WATCHER") }, down(), down(), down()]);
    await assert.rejects(collect(s.watch("m", { minDelayMs: 1, maxRetries: 3 })), { code: Code.Unavailable });
    assert.deepEqual(asked, [0, 1, 1, 1]);
    s.close();
  });

  test("TOKEN_EXPIRED resumes while the session's token is good, else ends the watch", async () => {
    const expired = () => refused(Code.Unauthenticated, "TOKEN_EXPIRED");
    const good = session([{ seqs: [1], end: expired() }, { seqs: [2] }]);
    assert.deepEqual(await collect(good.s.watch("m", { minDelayMs: 1 })), [1, 2]);
    assert.deepEqual(good.asked, [0, 1]);
    good.s.close();

    const old = session([{ seqs: [1], end: expired() }], new Date(Date.now() - 1000));
    await assert.rejects(collect(old.s.watch("m", { minDelayMs: 1 })), { code: Code.Unauthenticated, reason: "TOKEN_EXPIRED" });
    assert.deepEqual(old.asked, [0]);
    old.s.close();
  });

  test("an abort during the back-off ends the watch with the abort's reason", async () => {
    const { s } = session([{ seqs: [1], end: refused(Code.Unavailable, "UNAVAILABLE") }]);
    const ac = new AbortController();
    await assert.rejects(
      collect(s.watch("m", { signal: ac.signal, minDelayMs: 60_000, onReconnect: () => ac.abort(new Error("stop")) })),
      /stop/,
    );
    s.close();
  });
});
