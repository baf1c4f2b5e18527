package service

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// HistoryService: match history, exports, statistics, ratings and
// leaderboards. Every read is open to any authenticated player.

var outcomeProto = map[store.Outcome]hangarv1.MatchResult{
	store.OutcomeWon:       hangarv1.MatchResult_MATCH_RESULT_WON,
	store.OutcomePlaced:    hangarv1.MatchResult_MATCH_RESULT_PLACED,
	store.OutcomeLost:      hangarv1.MatchResult_MATCH_RESULT_LOST,
	store.OutcomeAbandoned: hangarv1.MatchResult_MATCH_RESULT_ABANDONED,
}

// historyGame is the store's name of the game g asks for: "" for any game
// when g is unset and not required.
func (s *historyServer) historyGame(g string, required bool) (string, error) {
	if g == "" && !required {
		return "", nil
	}
	gm, err := s.games.Lookup(g)
	if err != nil {
		return "", err
	}
	return gm.Name(), nil
}

// playerOrCaller is id, or the caller's id when id is empty.
func playerOrCaller(ctx context.Context, id string) (string, error) {
	if id == "" {
		me, _ := auth.Caller(ctx)
		return me.ID, nil
	}
	return id, ident.Check("player_id", id)
}

// viewer is the store's Viewer filter of a listing of player's matches:
// none for the player's own (all of them are the player's to see), else
// the caller, who sees only the private matches it may. (Viewer "" lists
// everything: a caller without an id is refused rather than given that.)
func viewer(ctx context.Context, player string) (string, error) {
	me, _ := auth.Caller(ctx)
	switch me.ID {
	case "":
		return "", errUnauthenticated
	case player:
		return "", nil
	}
	return me.ID, nil
}

// Page tokens of this file: base64url of a kind byte, 8 bytes of position
// (a time in Unix nanoseconds, or a score's float bits) and an id.
const (
	tokenEnded   = 'E' // a history listing: store.EndCursor
	tokenCreated = 'C' // a listing of matches not ended: store.Cursor
	tokenScore   = 'S' // a leaderboard: store.ScoreCursor
)

func encodeToken(kind byte, pos uint64, id string) string {
	b := binary.BigEndian.AppendUint64([]byte{kind}, pos)
	return base64.RawURLEncoding.EncodeToString(append(b, id...))
}

func decodeToken(t string, kind byte) (uint64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(b) < 10 || len(b) > 9+64 || b[0] != kind || !ident.Printable(string(b[9:])) {
		return 0, "", fmt.Errorf("%w: bad page_token", errInvalid)
	}
	return binary.BigEndian.Uint64(b[1:9]), string(b[9:]), nil
}

func timeOfToken(pos uint64) time.Time { return time.Unix(0, int64(pos)).UTC() }

// ListPlayerMatches implements hangarv1.HistoryServiceServer.
func (s *historyServer) ListPlayerMatches(ctx context.Context, req *hangarv1.ListPlayerMatchesRequest) (*hangarv1.ListPlayerMatchesResponse, error) {
	resp, err := s.listPlayerMatches(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

func (s *historyServer) listPlayerMatches(ctx context.Context, req *hangarv1.ListPlayerMatchesRequest) (*hangarv1.ListPlayerMatchesResponse, error) {
	player, err := playerOrCaller(ctx, req.GetPlayerId())
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize(), 20, 100)
	if err != nil {
		return nil, err
	}
	gname, err := s.historyGame(req.GetGame(), false)
	if err != nil {
		return nil, err
	}
	switch st := req.GetStatus(); st {
	case hangarv1.MatchStatus_MATCH_STATUS_UNSPECIFIED, hangarv1.MatchStatus_MATCH_STATUS_FINISHED:
	case hangarv1.MatchStatus_MATCH_STATUS_OPEN, hangarv1.MatchStatus_MATCH_STATUS_ACTIVE, hangarv1.MatchStatus_MATCH_STATUS_ABANDONED:
		if req.GetResult() != hangarv1.MatchResult_MATCH_RESULT_UNSPECIFIED || req.GetOpponentId() != "" ||
			req.GetEndedAfter() != nil || req.GetEndedBefore() != nil {
			return nil, fmt.Errorf("%w: result, opponent_id and the end times apply to finished matches only", errInvalid)
		}
		return s.listLiveMatches(ctx, req, player, gname, st, size)
	default:
		return nil, fmt.Errorf("%w: unknown status", errInvalid)
	}
	v, err := viewer(ctx, player)
	if err != nil {
		return nil, err
	}
	q := store.HistoryQuery{Player: player, Game: gname, Opponent: req.GetOpponentId(), Limit: size + 1, Viewer: v}
	if r := req.GetResult(); r != hangarv1.MatchResult_MATCH_RESULT_UNSPECIFIED {
		for o, p := range outcomeProto {
			if p == r {
				q.Outcome = o
			}
		}
		if q.Outcome == "" {
			return nil, fmt.Errorf("%w: unknown result", errInvalid)
		}
	}
	if q.Opponent != "" {
		if err := ident.Check("opponent_id", q.Opponent); err != nil {
			return nil, err
		}
	}
	for _, b := range []struct {
		ts  *timestamppb.Timestamp
		dst *time.Time
	}{{req.GetEndedAfter(), &q.From}, {req.GetEndedBefore(), &q.To}} {
		if b.ts == nil {
			continue
		}
		if err := b.ts.CheckValid(); err != nil {
			return nil, fmt.Errorf("%w: %v", errInvalid, err)
		}
		*b.dst = b.ts.AsTime()
	}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := decodeToken(t, tokenEnded)
		if err != nil {
			return nil, err
		}
		q.After = &store.EndCursor{Ended: timeOfToken(pos), ID: id}
	}
	rows, err := s.store.PlayerMatches(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ListPlayerMatchesResponse{}
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1].Match
		resp.NextPageToken = encodeToken(tokenEnded, uint64(last.Ended.UnixNano()), last.ID)
	}
	for _, r := range rows {
		pm, err := playerMatchProto(s.games, r)
		if err != nil {
			return nil, err
		}
		resp.Matches = append(resp.Matches, pm)
	}
	return resp, nil
}

// listLiveMatches lists the player's matches in status st (not ended by
// play), newest created first.
func (s *historyServer) listLiveMatches(ctx context.Context, req *hangarv1.ListPlayerMatchesRequest, player, gname string, st hangarv1.MatchStatus, size int) (*hangarv1.ListPlayerMatchesResponse, error) {
	v, err := viewer(ctx, player)
	if err != nil {
		return nil, err
	}
	q := store.Query{Player: player, Game: gname, Limit: size + 1, Viewer: v}
	for k, v := range match.StatusProto {
		if v == st {
			q.Status = k
		}
	}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := decodeToken(t, tokenCreated)
		if err != nil {
			return nil, err
		}
		q.After = &store.Cursor{Created: timeOfToken(pos), ID: id}
	}
	rows, err := s.store.Matches(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ListPlayerMatchesResponse{}
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1]
		resp.NextPageToken = encodeToken(tokenCreated, uint64(last.Created.UnixNano()), last.ID)
	}
	for _, r := range rows {
		pm, err := match.DecodeSummary(s.games, r.Summary)
		if err != nil {
			return nil, err
		}
		resp.Matches = append(resp.Matches, &hangarv1.PlayerMatch{Match: pm})
	}
	return resp, nil
}

func playerMatchProto(games *game.Registry, r store.PlayerMatch) (*hangarv1.PlayerMatch, error) {
	m, err := match.DecodeSummary(games, r.Match.Summary)
	if err != nil {
		return nil, fmt.Errorf("match %s: summary: %w", r.Match.ID, err)
	}
	res := r.Result
	pm := &hangarv1.PlayerMatch{
		Match: m, Seat: int32(res.Seat), Place: int32(res.Place), Result: outcomeProto[res.Outcome],
		TimePlayed: durationpb.New(res.Played), Rated: res.Rated, Counters: countersProto(res.Counters),
	}
	if c := r.Rating; c != nil {
		pm.RatingBefore, pm.RatingAfter = ratingProto(c.Before), ratingProto(c.After)
	}
	return pm, nil
}

// countersProto is a game's counters as the API lists them: sorted by name,
// zeros left out.
func countersProto(c store.Counters) []*hangarv1.Counter {
	var out []*hangarv1.Counter
	for _, name := range slices.Sorted(maps.Keys(c)) {
		if v := c[name]; v != 0 {
			out = append(out, &hangarv1.Counter{Name: name, Value: v})
		}
	}
	return out
}

// ratingProto is r as the API shows it; a player never rated has a new
// player's rating.
func ratingProto(r store.Rating) *hangarv1.Rating {
	if r.Matches == 0 {
		n := match.RatingOf(r)
		return &hangarv1.Rating{Mu: n.Mu, Sigma: n.Sigma, Score: n.Ordinal()}
	}
	return &hangarv1.Rating{Mu: r.Mu, Sigma: r.Sigma, Score: r.Score, RatedMatches: int32(r.Matches)}
}

// ExportMatch implements hangarv1.HistoryServiceServer.
func (s *historyServer) ExportMatch(ctx context.Context, req *hangarv1.ExportMatchRequest) (*hangarv1.ExportMatchResponse, error) {
	resp, err := s.exportMatch(ctx, req.GetMatchId())
	return resp, toStatus(ctx, s.log, err)
}

func (s *historyServer) exportMatch(ctx context.Context, id string) (*hangarv1.ExportMatchResponse, error) {
	if err := ident.Check("match_id", id); err != nil {
		return nil, err
	}
	m, err := s.w.Current(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.w.Visible(ctx, m); err != nil {
		return nil, err
	}
	text, err := s.exportText(ctx, m, s.w.PastEvents(m.Version))
	if err != nil {
		return nil, err
	}
	return &hangarv1.ExportMatchResponse{Text: text, Version: m.Version}, nil
}

// exportText is match m in the export's notation: a header line, its
// options, then one line per event, read with read.
func (s *Service) exportText(ctx context.Context, m *match.Match, read match.EventReader) (string, error) {
	id := m.ID
	var b strings.Builder
	fmt.Fprintf(&b, "# hangar match %s game=%s status=%s events=%d\n", m.ID, m.Game.Name(), m.Status, m.Version)
	fmt.Fprintf(&b, "options %s\n", m.Game.OptionsNotation(m.Options))
	for after := int64(0); after < m.Version; {
		evs, err := read(ctx, id, after, int(min(match.FoldPage, m.Version-after)))
		if err != nil {
			return "", err
		}
		if len(evs) == 0 && after == 0 {
			// The node's memory held the match; the store has archived it.
			return "", s.w.Gone(ctx, id)
		}
		if len(evs) == 0 {
			return "", fmt.Errorf("match %s: events after %d of %d are missing", id, after, m.Version)
		}
		for _, e := range evs {
			ev, err := match.DecodeEvent(s.games, id, e)
			if err != nil {
				return "", err
			}
			b.WriteString(s.eventNotation(m.Game, ev))
			b.WriteByte('\n')
			after = e.Seq
		}
	}
	return b.String(), nil
}

// eventNotation is one line of an export: a game event in its engine's
// notation, the match's own events in the same key=value style.
func (s *Service) eventNotation(g game.Game, ev *hangarv1.Event) string {
	seats := func(ss []int32) string {
		if len(ss) == 0 {
			return "-"
		}
		parts := make([]string, len(ss))
		for i, s := range ss {
			parts[i] = strconv.Itoa(int(s))
		}
		return strings.Join(parts, ",")
	}
	if ev.GetGame() != nil {
		gev, err := s.games.Event(g, ev)
		if err != nil {
			return "? " + err.Error()
		}
		return g.EventNotation(gev)
	}
	switch b := ev.Body.(type) {
	case *hangarv1.Event_MatchCreated:
		out := fmt.Sprintf("created seats=%d creator=%s", b.MatchCreated.GetSeatCount(), b.MatchCreated.GetCreatorId())
		if b.MatchCreated.GetPrivate() {
			out += " private"
			if ids := b.MatchCreated.GetInvitedPlayerIds(); len(ids) > 0 {
				out += " invited=" + strings.Join(ids, ",")
			}
		}
		return out
	case *hangarv1.Event_PlayersInvited:
		return "invited players=" + strings.Join(b.PlayersInvited.GetPlayerIds(), ",")
	case *hangarv1.Event_PlayerJoined:
		if b.PlayerJoined.GetBot() {
			return fmt.Sprintf("joined seat=%d bot", b.PlayerJoined.GetSeat())
		}
		return fmt.Sprintf("joined seat=%d player=%s name=%s", b.PlayerJoined.GetSeat(), b.PlayerJoined.GetPlayerId(),
			strconv.Quote(b.PlayerJoined.GetDisplayName()))
	case *hangarv1.Event_PlayerLeft:
		s := fmt.Sprintf("left seat=%d player=%s", b.PlayerLeft.GetSeat(), b.PlayerLeft.GetPlayerId())
		if b.PlayerLeft.GetForfeited() {
			s += " forfeited"
		}
		return s
	case *hangarv1.Event_MatchStarted:
		return "started seats=" + seats(b.MatchStarted.GetSeats())
	case *hangarv1.Event_TurnTimedOut:
		return fmt.Sprintf("timeout seat=%d consecutive=%d", b.TurnTimedOut.GetSeat(), b.TurnTimedOut.GetConsecutive())
	case *hangarv1.Event_SeatHandedToBot:
		return fmt.Sprintf("handed seat=%d player=%s", b.SeatHandedToBot.GetSeat(), b.SeatHandedToBot.GetPlayerId())
	case *hangarv1.Event_MatchEnded:
		st := "abandoned"
		if b.MatchEnded.GetStatus() == hangarv1.MatchStatus_MATCH_STATUS_FINISHED {
			st = "finished"
		}
		out := fmt.Sprintf("ended status=%s ranking=%s", st, seats(b.MatchEnded.GetRanking()))
		if ps := b.MatchEnded.GetPlaces(); !slices.Equal(ps, placesInOrder(len(ps))) {
			out += " places=" + seats(ps) // ties
		}
		if sc := b.MatchEnded.GetScores(); len(sc) > 0 {
			parts := make([]string, len(sc))
			for i, v := range sc {
				parts[i] = strconv.FormatInt(v, 10)
			}
			out += " scores=" + strings.Join(parts, ",")
		}
		return out
	}
	return "unknown"
}

// placesInOrder is 1, 2, … n: the places of a ranking without ties.
func placesInOrder(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i + 1)
	}
	return out
}

// GetPlayerStats implements hangarv1.HistoryServiceServer.
func (s *historyServer) GetPlayerStats(ctx context.Context, req *hangarv1.GetPlayerStatsRequest) (*hangarv1.GetPlayerStatsResponse, error) {
	resp, err := s.playerStats(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

func (s *historyServer) playerStats(ctx context.Context, req *hangarv1.GetPlayerStatsRequest) (*hangarv1.GetPlayerStatsResponse, error) {
	player, err := playerOrCaller(ctx, req.GetPlayerId())
	if err != nil {
		return nil, err
	}
	gname, err := s.historyGame(req.GetGame(), true)
	if err != nil {
		return nil, err
	}
	if req.GetPlayerId() != "" {
		if _, err := s.store.Player(ctx, player); err != nil {
			return nil, err
		}
	}
	st, err := s.store.PlayerStats(ctx, player, gname)
	if err != nil {
		return nil, err
	}
	p := &hangarv1.PlayerStats{
		PlayerId: player, Game: req.GetGame(), MatchesPlayed: int32(st.Played), MatchesWon: int32(st.Won),
		Forfeits: int32(st.Forfeits), CurrentWinStreak: int32(st.WinStreak),
		LongestWinStreak: int32(st.LongestWinStreak), TimePlayed: durationpb.New(st.TimePlayed),
		Counters: countersProto(st.Counters),
	}
	last := 0
	for i, n := range st.Places {
		if n > 0 {
			last = i + 1
		}
	}
	for _, n := range st.Places[:last] {
		p.PlaceCounts = append(p.PlaceCounts, int32(n))
	}
	if st.Played > 0 {
		p.AveragePlace = float64(st.PlaceSum) / float64(st.Played)
		p.LastMatchEndTime = timestamppb.New(st.LastEnded)
	}
	// The figures count every match, private ones too, and name none; the
	// end time of the last match is one match's, so another viewer gets
	// that of the last match it may see.
	v, err := viewer(ctx, player)
	if err != nil {
		return nil, err
	}
	if v != "" && st.Played > 0 {
		last, err := s.store.PlayerMatches(ctx, store.HistoryQuery{Player: player, Game: gname, Viewer: v, Limit: 1})
		if err != nil {
			return nil, err
		}
		p.LastMatchEndTime = nil
		if len(last) > 0 {
			p.LastMatchEndTime = timestamppb.New(last[0].Match.Ended)
		}
	}
	switch r, err := s.store.Standing(ctx, gname, player); {
	case err == nil:
		p.Rating, p.LeaderboardRank = ratingProto(r.Rating), int32(r.Rank)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return &hangarv1.GetPlayerStatsResponse{Stats: p}, nil
}

// GetRatingHistory implements hangarv1.HistoryServiceServer.
func (s *historyServer) GetRatingHistory(ctx context.Context, req *hangarv1.GetRatingHistoryRequest) (*hangarv1.GetRatingHistoryResponse, error) {
	resp, err := s.ratingHistory(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

func (s *historyServer) ratingHistory(ctx context.Context, req *hangarv1.GetRatingHistoryRequest) (*hangarv1.GetRatingHistoryResponse, error) {
	player, err := playerOrCaller(ctx, req.GetPlayerId())
	if err != nil {
		return nil, err
	}
	gname, err := s.historyGame(req.GetGame(), true)
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize(), 20, 100)
	if err != nil {
		return nil, err
	}
	v, err := viewer(ctx, player)
	if err != nil {
		return nil, err
	}
	q := store.RatingQuery{Player: player, Game: gname, Viewer: v, Limit: size + 1}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := decodeToken(t, tokenEnded)
		if err != nil {
			return nil, err
		}
		q.After = &store.EndCursor{Ended: timeOfToken(pos), ID: id}
	}
	cs, err := s.store.RatingHistory(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.GetRatingHistoryResponse{}
	if len(cs) > size {
		cs = cs[:size]
		last := cs[size-1]
		resp.NextPageToken = encodeToken(tokenEnded, uint64(last.Ended.UnixNano()), last.MatchID)
	}
	for _, c := range cs {
		resp.Changes = append(resp.Changes, &hangarv1.RatingChange{MatchId: c.MatchID, EndTime: timestamppb.New(c.Ended),
			Before: ratingProto(c.Before), After: ratingProto(c.After), Place: int32(c.Place), SeatCount: int32(c.Seats)})
	}
	return resp, nil
}

// ListLeaderboard implements hangarv1.HistoryServiceServer.
func (s *historyServer) ListLeaderboard(ctx context.Context, req *hangarv1.ListLeaderboardRequest) (*hangarv1.ListLeaderboardResponse, error) {
	resp, err := s.leaderboard(ctx, req)
	return resp, toStatus(ctx, s.log, err)
}

func (s *historyServer) leaderboard(ctx context.Context, req *hangarv1.ListLeaderboardRequest) (*hangarv1.ListLeaderboardResponse, error) {
	me, _ := auth.Caller(ctx)
	gname, err := s.historyGame(req.GetGame(), true)
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize(), 20, 100)
	if err != nil {
		return nil, err
	}
	q := store.LeaderboardQuery{Game: gname, Limit: size + 1}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := decodeToken(t, tokenScore)
		if err != nil {
			return nil, err
		}
		q.After = &store.ScoreCursor{Score: math.Float64frombits(pos), Player: id}
		if math.IsNaN(q.After.Score) {
			return nil, fmt.Errorf("%w: bad page_token", errInvalid)
		}
	}
	sts, err := s.store.Leaderboard(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ListLeaderboardResponse{}
	if len(sts) > size {
		sts = sts[:size]
		last := sts[size-1]
		resp.NextPageToken = encodeToken(tokenScore, math.Float64bits(last.Score), last.Player)
	}
	for _, st := range sts {
		resp.Entries = append(resp.Entries, entryProto(st))
	}
	switch mine, err := s.store.Standing(ctx, gname, me.ID); {
	case err == nil:
		resp.CallerEntry = entryProto(mine)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return resp, nil
}

func entryProto(st store.Standing) *hangarv1.LeaderboardEntry {
	return &hangarv1.LeaderboardEntry{Rank: int32(st.Rank), PlayerId: st.Player, DisplayName: st.DisplayName,
		Rating: ratingProto(st.Rating)}
}
