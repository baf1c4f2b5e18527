package history

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/auth"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/internal/page"
	"github.com/hangarhq/hangar/store"
)

// History answers the HistoryService's reads. Every read is open to any
// authenticated player.
type History struct {
	// Writer loads the match an export reads.
	Writer *match.Writer
	Store  store.Store
	Games  *game.Registry
	// Deleted says whether a player is deleted: an export names it
	// store.DeletedName. Nil: no player is.
	Deleted func(playerID string) bool
}

var outcomeProto = map[store.Outcome]hangarv1.MatchResult{
	store.OutcomeWon:       hangarv1.MatchResult_MATCH_RESULT_WON,
	store.OutcomePlaced:    hangarv1.MatchResult_MATCH_RESULT_PLACED,
	store.OutcomeLost:      hangarv1.MatchResult_MATCH_RESULT_LOST,
	store.OutcomeAbandoned: hangarv1.MatchResult_MATCH_RESULT_ABANDONED,
}

// historyGame is the store's name of the game g asks for: "" for any game
// when g is unset and not required.
func (s *History) historyGame(g string, required bool) (string, error) {
	if g == "" && !required {
		return "", nil
	}
	gm, err := s.Games.Lookup(g)
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
		return "", fault.ErrUnauthenticated
	case player:
		return "", nil
	}
	return me.ID, nil
}

// ListPlayerMatches lists a player's matches (the caller's when the
// request names none): the finished ones newest ended first, or with a
// status of a match not ended, those newest created first. The caller sees
// only the private matches it may. Errors wrap fault.ErrInvalid for a
// malformed request and fault.ErrUnauthenticated for a caller without an
// id.
func (s *History) ListPlayerMatches(ctx context.Context, req *hangarv1.ListPlayerMatchesRequest) (*hangarv1.ListPlayerMatchesResponse, error) {
	player, err := playerOrCaller(ctx, req.GetPlayerId())
	if err != nil {
		return nil, err
	}
	size, err := page.Size(req.GetPageSize(), 20, 100)
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
			return nil, fmt.Errorf("%w: result, opponent_id and the end times apply to finished matches only", fault.ErrInvalid)
		}
		return s.listLiveMatches(ctx, req, player, gname, st, size)
	default:
		return nil, fmt.Errorf("%w: unknown status", fault.ErrInvalid)
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
			return nil, fmt.Errorf("%w: unknown result", fault.ErrInvalid)
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
			return nil, fmt.Errorf("%w: %v", fault.ErrInvalid, err)
		}
		*b.dst = b.ts.AsTime()
	}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := page.Parse(t, page.Ended)
		if err != nil {
			return nil, err
		}
		q.After = &store.EndCursor{Ended: page.Time(pos), ID: id}
	}
	rows, err := s.Store.PlayerMatches(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ListPlayerMatchesResponse{}
	rows, resp.NextPageToken = page.Cut(rows, size, func(last store.PlayerMatch) string {
		return page.Token(page.Ended, uint64(last.Match.Ended.UnixNano()), last.Match.ID)
	})
	for _, r := range rows {
		pm, err := playerMatchProto(s.Games, r)
		if err != nil {
			return nil, err
		}
		resp.Matches = append(resp.Matches, pm)
	}
	return resp, nil
}

// listLiveMatches lists the player's matches in status st (not ended by
// play), newest created first.
func (s *History) listLiveMatches(ctx context.Context, req *hangarv1.ListPlayerMatchesRequest, player, gname string, st hangarv1.MatchStatus, size int) (*hangarv1.ListPlayerMatchesResponse, error) {
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
		pos, id, err := page.Parse(t, page.Created)
		if err != nil {
			return nil, err
		}
		q.After = &store.Cursor{Created: page.Time(pos), ID: id}
	}
	rows, err := s.Store.Matches(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ListPlayerMatchesResponse{}
	rows, resp.NextPageToken = page.Cut(rows, size, func(last store.Match) string {
		return page.Token(page.Created, uint64(last.Created.UnixNano()), last.ID)
	})
	for _, r := range rows {
		pm, err := match.DecodeSummary(s.Games, r.Summary)
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

// GetPlayerStats is a player's statistics in one game, with its rating and
// leaderboard rank when it has one. A player that does not exist is
// store.ErrNotFound.
func (s *History) GetPlayerStats(ctx context.Context, req *hangarv1.GetPlayerStatsRequest) (*hangarv1.GetPlayerStatsResponse, error) {
	player, err := playerOrCaller(ctx, req.GetPlayerId())
	if err != nil {
		return nil, err
	}
	gname, err := s.historyGame(req.GetGame(), true)
	if err != nil {
		return nil, err
	}
	if req.GetPlayerId() != "" {
		if _, err := s.Store.Player(ctx, player); err != nil {
			return nil, err
		}
	}
	st, err := s.Store.PlayerStats(ctx, player, gname)
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
		last, err := s.Store.PlayerMatches(ctx, store.HistoryQuery{Player: player, Game: gname, Viewer: v, Limit: 1})
		if err != nil {
			return nil, err
		}
		p.LastMatchEndTime = nil
		if len(last) > 0 {
			p.LastMatchEndTime = timestamppb.New(last[0].Match.Ended)
		}
	}
	switch r, err := s.Store.Standing(ctx, gname, player); {
	case err == nil:
		p.Rating, p.LeaderboardRank = ratingProto(r.Rating), int32(r.Rank)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return &hangarv1.GetPlayerStatsResponse{Stats: p}, nil
}

// GetRatingHistory lists how a player's rating in one game changed, match
// by match, newest first.
func (s *History) GetRatingHistory(ctx context.Context, req *hangarv1.GetRatingHistoryRequest) (*hangarv1.GetRatingHistoryResponse, error) {
	player, err := playerOrCaller(ctx, req.GetPlayerId())
	if err != nil {
		return nil, err
	}
	gname, err := s.historyGame(req.GetGame(), true)
	if err != nil {
		return nil, err
	}
	size, err := page.Size(req.GetPageSize(), 20, 100)
	if err != nil {
		return nil, err
	}
	v, err := viewer(ctx, player)
	if err != nil {
		return nil, err
	}
	q := store.RatingQuery{Player: player, Game: gname, Viewer: v, Limit: size + 1}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := page.Parse(t, page.Ended)
		if err != nil {
			return nil, err
		}
		q.After = &store.EndCursor{Ended: page.Time(pos), ID: id}
	}
	cs, err := s.Store.RatingHistory(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.GetRatingHistoryResponse{}
	cs, resp.NextPageToken = page.Cut(cs, size, func(last store.RatingChange) string {
		return page.Token(page.Ended, uint64(last.Ended.UnixNano()), last.MatchID)
	})
	for _, c := range cs {
		resp.Changes = append(resp.Changes, &hangarv1.RatingChange{MatchId: c.MatchID, EndTime: timestamppb.New(c.Ended),
			Before: ratingProto(c.Before), After: ratingProto(c.After), Place: int32(c.Place), SeatCount: int32(c.Seats)})
	}
	return resp, nil
}

// ListLeaderboard lists one game's leaderboard in rank order, and the
// caller's own entry when it has one.
func (s *History) ListLeaderboard(ctx context.Context, req *hangarv1.ListLeaderboardRequest) (*hangarv1.ListLeaderboardResponse, error) {
	me, _ := auth.Caller(ctx)
	gname, err := s.historyGame(req.GetGame(), true)
	if err != nil {
		return nil, err
	}
	size, err := page.Size(req.GetPageSize(), 20, 100)
	if err != nil {
		return nil, err
	}
	q := store.LeaderboardQuery{Game: gname, Limit: size + 1}
	if t := req.GetPageToken(); t != "" {
		pos, id, err := page.Parse(t, page.Score)
		if err != nil {
			return nil, err
		}
		q.After = &store.ScoreCursor{Score: math.Float64frombits(pos), Player: id}
		if math.IsNaN(q.After.Score) {
			return nil, fmt.Errorf("%w: bad page_token", fault.ErrInvalid)
		}
	}
	sts, err := s.Store.Leaderboard(ctx, q)
	if err != nil {
		return nil, err
	}
	resp := &hangarv1.ListLeaderboardResponse{}
	sts, resp.NextPageToken = page.Cut(sts, size, func(last store.Standing) string {
		return page.Token(page.Score, math.Float64bits(last.Score), last.Player)
	})
	for _, st := range sts {
		resp.Entries = append(resp.Entries, entryProto(st))
	}
	switch mine, err := s.Store.Standing(ctx, gname, me.ID); {
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
