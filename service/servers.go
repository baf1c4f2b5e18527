package service

import hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"

// The handlers, one type per gRPC service. Each translates its requests,
// calls the node's job packages (through the Service they share) and
// translates back; toStatus maps their errors.

// playerServer is the PlayerService: players: sign-up, tokens and sessions.
type playerServer struct {
	hangarv1.UnimplementedPlayerServiceServer
	*Service
}

// matchServer is the MatchService: matches: lobbies, invitations, reads and watches.
type matchServer struct {
	hangarv1.UnimplementedMatchServiceServer
	*Service
}

// moveServer is the MoveService: the moves of a match, unary and streamed (Play).
type moveServer struct {
	hangarv1.UnimplementedMoveServiceServer
	*Service
}

// historyServer is the HistoryService: the history: past matches, statistics, ratings, leaderboards.
type historyServer struct {
	hangarv1.UnimplementedHistoryServiceServer
	*Service
}

// noticeServer is the NoticeService: the players' notices.
type noticeServer struct {
	hangarv1.UnimplementedNoticeServiceServer
	*Service
}

// gameServer is the GameService: the hosted games and their message types.
type gameServer struct {
	hangarv1.UnimplementedGameServiceServer
	*Service
}
