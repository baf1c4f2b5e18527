import type { Client } from "@connectrpc/connect";
import { Code, HangarError, Reasons } from "./errors.js";
import type { MatchService, WatchMatchResponse } from "./gen/hangar/v1/match_pb.js";

/** WatchOptions configure Session.watch. */
export interface WatchOptions {
  /** afterSeq is the last event the caller has seen (0: every event). */
  afterSeq?: bigint | number;
  /**
   * followRematch keeps the watch going after the match's MatchEnded
   * while a rematch may start: it yields the offers and RematchStarted,
   * then ends; or it ends when the rematch window (ten minutes after the
   * end) closes. docs/offers.md, "Watching for the rematch".
   */
  followRematch?: boolean;
  /** signal stops the watch: the iterator throws its reason. */
  signal?: AbortSignal;
  /**
   * maxRetries is how many reconnections in a row may fail before the
   * watch gives up with the last error (default 8, about half a minute;
   * Infinity never gives up). A yielded event resets the count.
   */
  maxRetries?: number;
  /** minDelayMs is the first back-off (default 250), doubled at each failure. */
  minDelayMs?: number;
  /** maxDelayMs bounds the back-off (default 8000). */
  maxDelayMs?: number;
  /**
   * onReconnect is told each time the watch is about to reconnect: the
   * error that ended the stream, the attempt (1, 2 …) and the wait.
   */
  onReconnect?: (err: HangarError, attempt: number, delayMs: number) => void;
}

/**
 * watch yields the events of matchId after afterSeq and reconnects after
 * an error that a new stream may cure, asking for the events after the
 * last one it yielded: so it yields every event once, in order, without a
 * gap (a gap the server left is a HangarError with reason SEQUENCE_GAP).
 * recover says whether an UNAUTHENTICATED stream may reconnect with a new
 * token.
 */
export async function* watch(
  matches: Client<typeof MatchService>,
  matchId: string,
  options: WatchOptions,
  recover: (err: HangarError) => Promise<boolean>,
): AsyncGenerator<WatchMatchResponse, void, undefined> {
  const { signal, maxRetries = 8, minDelayMs = 250, maxDelayMs = 8000, followRematch = false } = options;
  let last = BigInt(options.afterSeq ?? 0);
  let failures = 0;
  for (;;) {
    signal?.throwIfAborted();
    try {
      for await (const r of matches.watchMatch({ matchId, afterSeq: last, followRematch }, { signal })) {
        const seq = r.event?.seq ?? r.version;
        if (seq <= last) {
          continue; // sent again: already yielded
        }
        if (seq !== last + 1n) {
          throw new HangarError(Code.DataLoss, `event ${seq} follows event ${last}`, { reason: Reasons.sequenceGap });
        }
        last = seq;
        failures = 0;
        yield r;
      }
      return; // the match's last event (or, following, RematchStarted)
    } catch (e) {
      signal?.throwIfAborted();
      const err = HangarError.from(e);
      if (!(await resumable(err, recover)) || failures >= maxRetries) {
        throw err;
      }
      failures++;
      const backoff = Math.min(maxDelayMs, minDelayMs * 2 ** (failures - 1));
      // Full jitter above half the back-off spreads the reconnections of
      // many clients after a server restart.
      const delay = Math.max(err.retryDelayMs ?? 0, backoff / 2 + (Math.random() * backoff) / 2);
      options.onReconnect?.(err, failures, delay);
      await sleep(delay, signal);
    }
  }
}

// resumable says whether a new stream may cure err: the server is away or
// draining, the connection broke, the watcher fell behind, or the token
// expired and the session has a new one.
async function resumable(err: HangarError, recover: (err: HangarError) => Promise<boolean>): Promise<boolean> {
  switch (err.code) {
    case Code.Unavailable:
    case Code.DeadlineExceeded:
      return true;
    case Code.Unknown:
    case Code.Internal:
    case Code.Canceled:
    case Code.Aborted:
      // A broken connection ("socket hang up" is ABORTED in Node.js) has
      // no reason of the server's.
      return err.reason === "";
    case Code.ResourceExhausted:
      return err.reason === Reasons.slowWatcher;
    case Code.Unauthenticated:
      return recover(err);
    default:
      return false;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const done = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", done);
      resolve();
    }, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
