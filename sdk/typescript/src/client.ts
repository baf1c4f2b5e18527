import type { DescService, Message, Registry } from "@bufbuild/protobuf";
import { timestampDate, type Any, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { HangarError, Reasons } from "./errors.js";
import { hangarRegistry, unpack } from "./games.js";
import { CalendarService } from "./gen/hangar/v1/calendar_pb.js";
import { ChatService } from "./gen/hangar/v1/chat_pb.js";
import { GameService, type GameInfo } from "./gen/hangar/v1/game_pb.js";
import { HistoryService } from "./gen/hangar/v1/history_pb.js";
import { MatchService } from "./gen/hangar/v1/match_pb.js";
import { MatchmakingService } from "./gen/hangar/v1/matchmaking_pb.js";
import { MoveService, type ActResponse } from "./gen/hangar/v1/move_pb.js";
import { NoticeService } from "./gen/hangar/v1/notice_pb.js";
import { OfferService } from "./gen/hangar/v1/offers_pb.js";
import { PlayerService, type Player } from "./gen/hangar/v1/player_pb.js";
import { FriendService } from "./gen/hangar/v1/social_pb.js";
import type { WatchMatchResponse } from "./gen/hangar/v1/match_pb.js";
import { watch, type WatchOptions } from "./watch.js";

/**
 * TransportOptions are the options the SDK gives a transport factory: the
 * base URL, HTTP/1.1 (every call of Hangar's but the bidirectional Play
 * works over it, in browsers too), the binary format, and a registry for
 * the JSON format, which needs one to write and read an Any.
 */
export interface TransportOptions {
  baseUrl: string;
  httpVersion: "1.1" | "2";
  useBinaryFormat: boolean;
  jsonOptions: { registry: Registry };
}

/**
 * TransportFactory is createConnectTransport from @connectrpc/connect-web
 * (browsers) or @connectrpc/connect-node (Node.js). The SDK's core imports
 * neither: the caller chooses.
 */
export type TransportFactory = (options: TransportOptions) => Transport;

/** ClientOptions configure createHangarClient. */
export interface ClientOptions {
  /** baseUrl is the server's HTTP address ("https://hangar.example.com"). */
  baseUrl?: string;
  /**
   * transport is a transport factory (createConnectTransport), called with
   * baseUrl and the SDK's TransportOptions, or a transport made already
   * (then baseUrl is unused; make it with jsonOptions.registry set to
   * hangarRegistry if it speaks JSON).
   */
  transport: Transport | TransportFactory;
  /** transportOptions override the SDK's (httpVersion "2", a fetch …). */
  transportOptions?: Partial<TransportOptions> & Record<string, unknown>;
  /** registry decodes Any; hangarRegistry by default (createHangarRegistry adds a game). */
  registry?: Registry;
}

/** Token is a bearer token and when it expires. */
export interface Token {
  token: string;
  expireTime: Date;
}

/** SessionOptions configure a Session. */
export interface SessionOptions {
  /**
   * onToken is called with each new token the session gets (a refresh, a
   * renewal): keep it (localStorage, a cookie) to resume the session later.
   */
  onToken?: (token: Token) => void;
  /**
   * renew gets a new token when the session's can no longer be refreshed
   * (it expired, or was revoked): from the app's backend, say. Without it
   * such a call ends with the HangarError (UNAUTHENTICATED, TOKEN_EXPIRED).
   */
  renew?: () => Promise<Token>;
  /**
   * refreshAt is the part of a token's lifetime that is left when the
   * session refreshes it (default 1/3: a 30-day token after 20 days).
   */
  refreshAt?: number;
}

/** HangarClient is a connection to a Hangar server, before sign-in. */
export interface HangarClient {
  /** transport is the transport every call goes through. */
  readonly transport: Transport;
  /** registry decodes the Any fields of responses. */
  readonly registry: Registry;
  /** games is GameService (no token needed). */
  readonly games: Client<typeof GameService>;
  /** listGames lists the hosted games, by name. */
  listGames(options?: CallOptions): Promise<GameInfo[]>;
  /** board returns a game's board message, decoded (no token needed). */
  board(game: string, options?: CallOptions): Promise<Message | undefined>;
  /**
   * createPlayer registers a player (a guest sign-up) and returns its
   * session. A random request id makes a retry of the call safe.
   */
  createPlayer(displayName: string, options?: SessionOptions & { requestId?: string } & CallOptions): Promise<Session>;
  /**
   * signInExternal signs in one of a backend's users with the backend's
   * API key (SignInExternalPlayer): for servers only, since the key is a
   * secret. The session renews its token the same way when it expires.
   */
  signInExternal(apiKey: string, externalId: string, displayName: string, options?: SessionOptions): Promise<Session>;
  /** resume returns a session for a token kept from before. */
  resume(token: Token, options?: SessionOptions): Session;
}

/**
 * createHangarClient connects to a Hangar server. In a browser:
 *
 *     import { createConnectTransport } from "@connectrpc/connect-web";
 *     const hangar = createHangarClient({ baseUrl: location.origin, transport: createConnectTransport });
 *     const session = await hangar.createPlayer("Ada");
 *
 * In Node.js, the same with createConnectTransport from
 * @connectrpc/connect-node.
 */
export function createHangarClient(options: ClientOptions): HangarClient {
  const registry = options.registry ?? hangarRegistry;
  let transport: Transport;
  if (typeof options.transport === "function") {
    if (!options.baseUrl) {
      throw new Error("createHangarClient: baseUrl is required with a transport factory");
    }
    transport = options.transport({
      baseUrl: options.baseUrl,
      httpVersion: "1.1",
      useBinaryFormat: true,
      jsonOptions: { registry },
      ...options.transportOptions,
    });
  } else {
    transport = options.transport;
  }
  const anonymous = noSession;
  const games = wrap(GameService, transport, anonymous);
  const players = wrap(PlayerService, transport, anonymous);
  const matches = wrap(MatchService, transport, anonymous);
  const client: HangarClient = {
    transport,
    registry,
    games,
    async listGames(callOptions) {
      return (await games.listGames({}, callOptions)).games;
    },
    async board(game, callOptions) {
      return unpack((await matches.getBoard({ game }, callOptions)).board, registry);
    },
    async createPlayer(displayName, opts = {}) {
      const { onToken, renew, refreshAt, requestId, ...callOptions } = opts;
      const r = await players.createPlayer({ displayName, requestId: requestId ?? newRequestId() }, callOptions);
      return new Session(client, tokenOf(r), { onToken, renew, refreshAt }, r.player);
    },
    async signInExternal(apiKey, externalId, displayName, opts = {}) {
      const signIn = async () => {
        const r = await players.signInExternalPlayer({ externalId, displayName }, { headers: bearer(apiKey) });
        return { r, token: tokenOf(r) };
      };
      const { r, token } = await signIn();
      return new Session(client, token, { renew: async () => (await signIn()).token, ...opts }, r.player);
    },
    resume(token, opts = {}) {
      return new Session(client, token, opts);
    },
  };
  return client;
}

/**
 * Session is a signed-in player: the typed clients of every service, whose
 * calls carry its token, and a watch of a match's events that resumes
 * after a dropped connection. It refreshes its token before it expires
 * (when a third of its lifetime is left, on a timer that does not keep
 * Node.js running, and before any call made later than that), and retries
 * a call once that failed with TOKEN_EXPIRED after another call had
 * refreshed it or renew gave a new one. Every call's error is a HangarError.
 */
export class Session {
  readonly client: HangarClient;
  readonly players: Client<typeof PlayerService>;
  readonly matches: Client<typeof MatchService>;
  readonly moves: Client<typeof MoveService>;
  readonly history: Client<typeof HistoryService>;
  readonly matchmaking: Client<typeof MatchmakingService>;
  readonly notices: Client<typeof NoticeService>;
  readonly offers: Client<typeof OfferService>;
  readonly chat: Client<typeof ChatService>;
  readonly friends: Client<typeof FriendService>;
  readonly calendar: Client<typeof CalendarService>;

  #token: Token;
  #due = 0; // when (ms since the epoch) the token is to be refreshed
  #refreshing: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #player: Player | undefined;
  readonly #options: SessionOptions;
  readonly #raw: Client<typeof PlayerService>;

  constructor(client: HangarClient, token: Token, options: SessionOptions = {}, player?: Player) {
    this.client = client;
    this.#options = options;
    this.#player = player;
    this.#raw = wrap(PlayerService, client.transport, noSession);
    const auth: Auth = {
      headers: async () => {
        await this.#fresh();
        return this.#token.token;
      },
      recover: (used, err) => this.#recover(err, used),
    };
    this.players = wrap(PlayerService, client.transport, auth);
    this.matches = wrap(MatchService, client.transport, auth);
    this.moves = wrap(MoveService, client.transport, auth);
    this.history = wrap(HistoryService, client.transport, auth);
    this.matchmaking = wrap(MatchmakingService, client.transport, auth);
    this.notices = wrap(NoticeService, client.transport, auth);
    this.offers = wrap(OfferService, client.transport, auth);
    this.chat = wrap(ChatService, client.transport, auth);
    this.friends = wrap(FriendService, client.transport, auth);
    this.calendar = wrap(CalendarService, client.transport, auth);
    this.#token = token;
    this.#schedule(Date.now());
  }

  /** token is the session's current bearer token. */
  get token(): Token {
    return this.#token;
  }

  /** player returns the signed-in player (GetPlayer, asked once). */
  async player(): Promise<Player> {
    if (!this.#player) {
      const r = await this.players.getPlayer({});
      if (!r.player) {
        throw new HangarError(Code.Internal, "GetPlayer returned no player");
      }
      this.#player = r.player;
    }
    return this.#player;
  }

  /**
   * refresh trades the token for a new one now (calls in flight with the
   * old one still succeed: the server keeps it valid for one more minute).
   * Concurrent calls share one refresh.
   */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const r = await this.#raw.refreshToken({}, { headers: bearer(this.#token.token) });
        this.#set(tokenOf(r));
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /**
   * watch yields a match's events after afterSeq (0: from the start), each
   * once and in order, and ends after the match's last event. A dropped
   * connection, a restarted server or a token that expired mid-stream
   * reconnect after a back-off, resuming after the last event yielded.
   * The signal option stops it (the iterator then throws the abort
   * reason); so does a break out of a for-await loop.
   */
  watch(matchId: string, options: WatchOptions = {}): AsyncGenerator<WatchMatchResponse, void, undefined> {
    return watch(this.matches, matchId, options, (err) => this.#recover(err));
  }

  /**
   * act plays one of the game's actions (packed with pack()) as the
   * caller's seat at expectedVersion, with a new request id.
   */
  act(matchId: string, expectedVersion: bigint, action: Any, options?: CallOptions): Promise<ActResponse> {
    return this.moves.act({ matchId, expectedVersion, action, requestId: newRequestId() }, options);
  }

  /** signOut revokes every token of the player and closes the session. */
  async signOut(): Promise<void> {
    await this.players.signOut({});
    this.close();
  }

  /** revoke revokes this session's token and closes the session. */
  async revoke(): Promise<void> {
    await this.players.revokeToken({});
    this.close();
  }

  /** close stops the session's refresh timer; its calls still work until the token expires. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #set(token: Token): void {
    this.#token = token;
    this.#schedule(Date.now());
    this.#options.onToken?.(token);
  }

  // schedule sets the time of the next refresh and its timer.
  #schedule(now: number): void {
    const left = this.#token.expireTime.getTime() - now;
    this.#due = now + left * (1 - (this.#options.refreshAt ?? 1 / 3));
    clearTimeout(this.#timer);
    if (this.#closed || left <= 0) {
      return;
    }
    // setTimeout holds at most 2^31-1 ms (24.8 days); a longer wait is
    // cut and the timer set again when it fires.
    const wait = Math.min(Math.max(this.#due - now, 0), 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      if (Date.now() < this.#due) {
        this.#schedule(Date.now());
      } else {
        this.#fresh().catch(() => {}); // the next call meets the error
      }
    }, wait);
    const t = this.#timer as { unref?: () => void };
    t.unref?.();
  }

  // fresh refreshes the token if it is due, or renews it if it expired.
  async #fresh(): Promise<void> {
    const now = Date.now();
    if (now < this.#due) {
      return;
    }
    if (now >= this.#token.expireTime.getTime()) {
      if (this.#options.renew) {
        this.#set(await this.#options.renew());
      }
      return; // no renew: the call fails with TOKEN_EXPIRED, as it should
    }
    try {
      await this.refresh();
    } catch (e) {
      const err = HangarError.from(e);
      if (err.code !== Code.Unauthenticated || !this.#options.renew) {
        throw err;
      }
      this.#set(await this.#options.renew());
    }
  }

  // recover says whether a call or a watch that failed with err may be
  // made again with the session's token: the server said TOKEN_EXPIRED,
  // and the session has a newer token (the call's, used, was replaced; a
  // watch, which does not know its stream's, has one that has not expired:
  // an old token expires a minute after its refresh, and its streams end),
  // or renew gives one.
  async #recover(err: HangarError, used?: string): Promise<boolean> {
    if (err.code !== Code.Unauthenticated || err.reason !== Reasons.tokenExpired) {
      return false;
    }
    await this.#refreshing?.catch(() => {});
    const newer = used !== undefined ? this.#token.token !== used : this.#token.expireTime.getTime() > Date.now();
    if (newer) {
      return true;
    }
    if (!this.#options.renew) {
      return false;
    }
    this.#set(await this.#options.renew());
    return true;
  }
}

/**
 * newRequestId returns a random request id (a UUIDv4) for a command. It
 * uses crypto.getRandomValues, which browsers give plain-HTTP pages too
 * (crypto.randomUUID needs a secure context).
 */
export function newRequestId(): string {
  const b = globalThis.crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; // version 4
  b[8] = (b[8] & 0x3f) | 0x80; // the RFC 9562 variant
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Auth gives a wrapped client its token and says whether a failed call may
// be made again with a new one.
interface Auth {
  headers(): Promise<string | undefined>;
  recover(used: string, err: HangarError): Promise<boolean>;
}

const noSession: Auth = {
  headers: async () => undefined,
  recover: async () => false,
};

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function tokenOf(r: { token: string; expireTime?: Timestamp }): Token {
  return { token: r.token, expireTime: r.expireTime ? timestampDate(r.expireTime) : new Date(8.64e15) };
}

function withToken(options: CallOptions | undefined, token: string | undefined): CallOptions {
  if (token === undefined) {
    return options ?? {};
  }
  const headers = new Headers(options?.headers);
  headers.set("authorization", `Bearer ${token}`);
  return { ...options, headers };
}

// wrap returns a client of service whose calls carry auth's token, whose
// unary calls are made again once when auth recovers from their error, and
// whose errors are HangarErrors. A stream is not made again here: a watch
// resumes from its last event (watch.ts), which only its caller knows.
function wrap<S extends DescService>(service: S, transport: Transport, auth: Auth): Client<S> {
  const raw = createClient(service, transport) as unknown as Record<string, (...args: unknown[]) => unknown>;
  const out: Record<string, unknown> = {};
  for (const m of service.methods) {
    const call = raw[m.localName];
    switch (m.methodKind) {
      case "unary":
        out[m.localName] = async (req: unknown, options?: CallOptions) => {
          const token = await auth.headers();
          try {
            return await call(req, withToken(options, token));
          } catch (e) {
            const err = HangarError.from(e);
            if (token === undefined || !(await auth.recover(token, err))) {
              throw err;
            }
          }
          try {
            return await call(req, withToken(options, await auth.headers()));
          } catch (e) {
            throw HangarError.from(e);
          }
        };
        break;
      default:
        out[m.localName] = (req: unknown, options?: CallOptions) => stream(auth, (token) => call(req, withToken(options, token)));
    }
  }
  return out as Client<S>;
}

async function* stream(auth: Auth, open: (token: string | undefined) => unknown): AsyncGenerator<unknown> {
  try {
    const it = open(await auth.headers()) as AsyncIterable<unknown>;
    yield* it;
  } catch (e) {
    throw HangarError.from(e);
  }
}
