// Watches that outlive a dropped stream: the page's live views (chat,
// notices) resume from the last item they showed.

import { Code, HangarError } from "../../../sdk/typescript/src/index.js";

/** retryable says whether a watch that ended with err is opened again. */
function retryable(err: unknown): boolean {
  const e = HangarError.from(err);
  return [Code.Unavailable, Code.Unknown, Code.Internal, Code.DeadlineExceeded, Code.Aborted].includes(e.code) || e.reason === "SLOW_WATCHER";
}

/**
 * resume keeps a watch open until signal aborts: it opens one with open
 * (which asks from the last item shown), hands each response to each, and
 * after a stream that ended (a node going away) or broke with a retryable
 * error opens it again after a back-off, 250 ms doubling to 8 s. ended, if
 * given, runs when a stream ends without an error. It returns nothing once
 * signal aborts, or the error that ended the watch for good.
 */
export async function resume<T>(signal: AbortSignal, open: () => AsyncIterable<T>, each: (r: T) => Promise<void>,
  ended?: () => void): Promise<unknown> {
  for (let failures = 0; ; ) {
    try {
      for await (const r of open()) {
        await each(r);
        failures = 0;
      }
      ended?.();
    } catch (err) {
      if (signal.aborted) return undefined;
      if (!retryable(err)) return err;
      failures++;
    }
    await new Promise((res) => setTimeout(res, Math.min(8000, 250 * 2 ** Math.min(failures, 5))));
    if (signal.aborted) return undefined;
  }
}
