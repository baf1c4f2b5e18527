import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";

export { Code };

/**
 * Reasons are the ErrorInfo reasons the SDK itself acts on. The server sends
 * many more (NOT_YOUR_TURN, VERSION_CONFLICT, MATCH_PRIVATE …): they are
 * stable strings, compared as HangarError.reason.
 */
export const Reasons = {
  /** The token has expired: refresh it before, or sign in again. */
  tokenExpired: "TOKEN_EXPIRED",
  /** The token was revoked (RevokeToken, SignOut): sign in again. */
  tokenRevoked: "TOKEN_REVOKED",
  /** The watch fell behind the match: it resumes from its last event. */
  slowWatcher: "SLOW_WATCHER",
  /** Set by the SDK: a watch's server skipped a sequence number. */
  sequenceGap: "SEQUENCE_GAP",
} as const;

/**
 * HangarError is every error the SDK's calls end with: the Connect code
 * (the gRPC status code), the stable reason the server named in its
 * google.rpc.ErrorInfo (empty when it named none, as for a dropped
 * connection), the ErrorInfo's metadata (such as "current_version" of a
 * VERSION_CONFLICT) and, when the server asked for one, the delay to wait
 * before retrying (google.rpc.RetryInfo). Match on code and reason, never
 * on the message.
 */
export class HangarError extends Error {
  override readonly name = "HangarError";
  /** code is the status code (Code.FailedPrecondition …). */
  readonly code: Code;
  /** reason is the server's ErrorInfo reason ("NOT_YOUR_TURN"), or "". */
  readonly reason: string;
  /** domain is the reason's namespace ("hangar"), or "". */
  readonly domain: string;
  /** metadata are the ErrorInfo's particulars. */
  readonly metadata: Readonly<Record<string, string>>;
  /** retryDelayMs is RetryInfo's delay in milliseconds, if the server sent one. */
  readonly retryDelayMs: number | undefined;
  /** rawMessage is the server's message without the code in front. */
  readonly rawMessage: string;

  constructor(
    code: Code,
    message: string,
    info: { reason?: string; domain?: string; metadata?: Record<string, string>; retryDelayMs?: number; cause?: unknown } = {},
  ) {
    super(`[${Code[code] ?? code}${info.reason ? " " + info.reason : ""}] ${message}`, { cause: info.cause });
    this.code = code;
    this.rawMessage = message;
    this.reason = info.reason ?? "";
    this.domain = info.domain ?? "";
    this.metadata = info.metadata ?? {};
    this.retryDelayMs = info.retryDelayMs;
  }

  /**
   * from turns anything a call threw into a HangarError: a ConnectError
   * with its details decoded, an abort as Code.Canceled, anything else as
   * Code.Unknown. A HangarError comes back as it is.
   */
  static from(err: unknown): HangarError {
    if (err instanceof HangarError) {
      return err;
    }
    const ce = ConnectError.from(err);
    const [info] = ce.findDetails(ErrorInfoSchema);
    const [retry] = ce.findDetails(RetryInfoSchema);
    let retryDelayMs: number | undefined;
    if (retry?.retryDelay) {
      retryDelayMs = Number(retry.retryDelay.seconds) * 1000 + Math.floor(retry.retryDelay.nanos / 1e6);
    }
    return new HangarError(ce.code, ce.rawMessage, {
      reason: info?.reason,
      domain: info?.domain,
      metadata: info ? { ...info.metadata } : undefined,
      retryDelayMs,
      cause: err,
    });
  }
}
