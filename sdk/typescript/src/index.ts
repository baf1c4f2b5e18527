// @hangarhq/sdk: a client of Hangar's API for browsers and Node.js. The
// core imports no Node.js module: the caller passes the transport,
// createConnectTransport from @connectrpc/connect-web in a browser or from
// @connectrpc/connect-node in Node.js.

export {
  createHangarClient,
  newRequestId,
  Session,
  type ClientOptions,
  type HangarClient,
  type SessionOptions,
  type Token,
  type TransportFactory,
  type TransportOptions,
} from "./client.js";
export { Code, HangarError, Reasons } from "./errors.js";
export {
  createHangarRegistry,
  gameEvent,
  gameFiles,
  gameTypes,
  hangarRegistry,
  pack,
  unpack,
  unpackAs,
  type GameTypes,
} from "./games.js";
export type { WatchOptions } from "./watch.js";

// The generated messages: the platform API as v1, each hosted game under
// its name.
export * as v1 from "./v1.js";
export * as aeroplane from "./gen/hangar/aeroplane/v1/aeroplane_pb.js";
export * as carcassonne from "./gen/hangar/carcassonne/v1/carcassonne_pb.js";
