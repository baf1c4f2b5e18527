// The platform API (hangar.v1): its messages, enums and services.
export * from "./gen/hangar/v1/calendar_pb.js";
export * from "./gen/hangar/v1/chat_pb.js";
export * from "./gen/hangar/v1/clock_pb.js";
export * from "./gen/hangar/v1/game_pb.js";
export * from "./gen/hangar/v1/history_pb.js";
export * from "./gen/hangar/v1/match_pb.js";
export * from "./gen/hangar/v1/matchmaking_pb.js";
export * from "./gen/hangar/v1/move_pb.js";
export * from "./gen/hangar/v1/notice_pb.js";
export * from "./gen/hangar/v1/offer_pb.js";
export * from "./gen/hangar/v1/offers_pb.js";
export * from "./gen/hangar/v1/player_pb.js";
export * from "./gen/hangar/v1/social_pb.js";
