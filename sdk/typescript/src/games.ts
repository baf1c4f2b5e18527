import {
  create,
  createRegistry,
  type DescFile,
  type DescMessage,
  type Message,
  type MessageInitShape,
  type MessageShape,
  type Registry,
} from "@bufbuild/protobuf";
import { anyPack, anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { file_hangar_aeroplane_v1_aeroplane } from "./gen/hangar/aeroplane/v1/aeroplane_pb.js";
import { file_hangar_carcassonne_v1_carcassonne } from "./gen/hangar/carcassonne/v1/carcassonne_pb.js";
import { file_google_rpc_error_details } from "./gen/google/rpc/error_details_pb.js";
import { file_hangar_v1_game, type GameInfo } from "./gen/hangar/v1/game_pb.js";
import { file_hangar_v1_history } from "./gen/hangar/v1/history_pb.js";
import { file_hangar_v1_match, type Event } from "./gen/hangar/v1/match_pb.js";
import { file_hangar_v1_matchmaking } from "./gen/hangar/v1/matchmaking_pb.js";
import { file_hangar_v1_move } from "./gen/hangar/v1/move_pb.js";
import { file_hangar_v1_notice } from "./gen/hangar/v1/notice_pb.js";
import { file_hangar_v1_player } from "./gen/hangar/v1/player_pb.js";

// The platform's messages carry each game's options, state, board,
// actions and events as google.protobuf.Any. The helpers here pack and
// unpack them with a registry of the games' generated descriptors, so a
// client names a game's types, never a type URL.

/** gameFiles are the generated files of the games Hangar hosts. */
export const gameFiles: readonly DescFile[] = [file_hangar_aeroplane_v1_aeroplane, file_hangar_carcassonne_v1_carcassonne];

/**
 * createHangarRegistry returns a registry of the platform API, the error
 * details and the hosted games' messages, plus the files of more games (a
 * studio's own, generated with protoc-gen-es) given as extra.
 */
export function createHangarRegistry(...extra: (DescFile | DescMessage | Registry)[]): Registry {
  return createRegistry(
    file_hangar_v1_game,
    file_hangar_v1_history,
    file_hangar_v1_match,
    file_hangar_v1_matchmaking,
    file_hangar_v1_move,
    file_hangar_v1_notice,
    file_hangar_v1_player,
    file_google_rpc_error_details,
    ...gameFiles,
    ...extra,
  );
}

/** hangarRegistry is createHangarRegistry() with no extra game. */
export const hangarRegistry: Registry = createHangarRegistry();

/**
 * pack puts a game's message in an Any: pack(MoveSchema, { plane: 2 }).
 * The message may be made already or given as its fields.
 */
export function pack<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc> | MessageInitShape<Desc>): Any {
  return anyPack(schema, create(schema, message as MessageInitShape<Desc>));
}

/**
 * unpack returns the message in an Any as the type the registry knows for
 * it (hangarRegistry by default), or undefined for an unset Any or a type
 * the registry lacks. Check the result's $typeName, or use unpackAs.
 */
export function unpack(any: Any | undefined, registry: Registry = hangarRegistry): Message | undefined {
  return any ? anyUnpack(any, registry) : undefined;
}

/**
 * unpackAs returns the message in an Any when it is of the schema's type,
 * else undefined: unpackAs(match.state, aeroplane.StateSchema).
 */
export function unpackAs<Desc extends DescMessage>(any: Any | undefined, schema: Desc): MessageShape<Desc> | undefined {
  return any ? anyUnpack(any, schema) : undefined;
}

/**
 * gameEvent returns the game's own event an Event carries (Event.body's
 * "game" case) decoded, or undefined when the event is the platform's
 * (PlayerJoined, MatchEnded …) or of a type the registry lacks.
 */
export function gameEvent(event: Event | undefined, registry: Registry = hangarRegistry): Message | undefined {
  return event?.body.case === "game" ? unpack(event.body.value, registry) : undefined;
}

/** GameTypes are a hosted game's message types as the registry knows them. */
export interface GameTypes {
  options?: DescMessage;
  state?: DescMessage;
  board?: DescMessage;
  event?: DescMessage;
  actions: DescMessage[];
}

/**
 * gameTypes looks up the types a ListGames entry names. A type the registry
 * lacks is left unset (or out of actions): a game this client was not built
 * with, which it can list but not decode.
 */
export function gameTypes(info: GameInfo, registry: Registry = hangarRegistry): GameTypes {
  const get = (name: string) => (name ? registry.getMessage(name) : undefined);
  return {
    options: get(info.optionsType),
    state: get(info.stateType),
    board: get(info.boardType),
    event: get(info.eventType),
    actions: info.actionTypes.map(get).filter((d): d is DescMessage => d !== undefined),
  };
}
