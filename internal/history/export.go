package history

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/ident"
	"github.com/hangarhq/hangar/internal/match"
	"github.com/hangarhq/hangar/store"
)

// ExportMatch is the match the request names in the export's notation
// (Export), as of its current version. A match the caller may not see, or
// one archived, is an error wrapping fault.ErrNotFound.
func (s *History) ExportMatch(ctx context.Context, req *hangarv1.ExportMatchRequest) (*hangarv1.ExportMatchResponse, error) {
	id := req.GetMatchId()
	if err := ident.Check("match_id", id); err != nil {
		return nil, err
	}
	m, err := s.Writer.Current(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.Writer.Visible(ctx, m); err != nil {
		return nil, err
	}
	text, err := s.Export(ctx, m, s.Writer.PastEvents(m.Version))
	if err != nil {
		return nil, err
	}
	return &hangarv1.ExportMatchResponse{Text: text, Version: m.Version}, nil
}

// Export is match m in the export's notation: a header line, its
// options, then one line per event, read with read.
func (s *History) Export(ctx context.Context, m *match.Match, read match.EventReader) (string, error) {
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
			return "", s.Writer.Gone(ctx, id)
		}
		if len(evs) == 0 {
			return "", fmt.Errorf("match %s: events after %d of %d are missing", id, after, m.Version)
		}
		for _, e := range evs {
			ev, err := match.DecodeEvent(s.Games, id, e)
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
func (s *History) eventNotation(g game.Game, ev *hangarv1.Event) string {
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
		gev, err := s.Games.Event(g, ev)
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
		if of := b.MatchCreated.GetRematchOf(); of != "" {
			out += " rematch_of=" + of
		}
		return out
	case *hangarv1.Event_PlayersInvited:
		return "invited players=" + strings.Join(b.PlayersInvited.GetPlayerIds(), ",")
	case *hangarv1.Event_PlayerJoined:
		if b.PlayerJoined.GetBot() {
			return fmt.Sprintf("joined seat=%d bot", b.PlayerJoined.GetSeat())
		}
		name := b.PlayerJoined.GetDisplayName()
		if s.Deleted != nil && s.Deleted(b.PlayerJoined.GetPlayerId()) {
			name = store.DeletedName
		}
		return fmt.Sprintf("joined seat=%d player=%s name=%s", b.PlayerJoined.GetSeat(), b.PlayerJoined.GetPlayerId(),
			strconv.Quote(name))
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
		if k := b.MatchEnded.GetEndedByKeyId(); k != "" {
			out += " by_key=" + k
		}
		if r := b.MatchEnded.GetReason(); r != "" {
			out += " reason=" + strconv.Quote(r)
		}
		return out
	case *hangarv1.Event_SeatCalendar:
		c := b.SeatCalendar
		out := fmt.Sprintf("calendar seat=%d zone=%s", c.GetSeat(), cmp.Or(c.GetTimeZone(), "-"))
		if c.GetVacationStart() != nil {
			out += fmt.Sprintf(" vacation=%s/%s", c.GetVacationStart().AsTime().Format(time.RFC3339), c.GetVacationEnd().AsTime().Format(time.RFC3339))
		}
		return out
	}
	if line, ok := offerNotation(ev); ok {
		return line
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
