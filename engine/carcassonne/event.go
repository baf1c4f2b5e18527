package carcassonne

import (
	"fmt"
	"slices"
)

// EventKind says what happened.
type EventKind uint8

// The event kinds. A move returns the events it caused; folding them into the state before the
// move gives the state after it (Apply, Fold).
const (
	Drew      EventKind = iota + 1 // Seat drew Tile (the chance input of Draw)
	Discarded                      // Tile fits nowhere and left the game; Seat draws again
	Placed                         // Seat placed Tile at At turned Rot
	Deployed                       // Seat put a follower on feature Feature of the tile at At
	Passed                         // Seat placed no follower this turn
	Flew                           // Seat's follower flew Roll cells to At (the chance input of Fly)
	Landed                         // the flown follower of Seat landed on feature Feature of the tile at At
	Scored                         // Seat scored Points for the Feature kind feature containing segment (At, Feature); Final at game end
	Returned                       // the follower of Seat on segment (At, Feature) went back to supply
	NextTurn                       // Seat is the next to draw
	Ended                          // the game is over
)

var eventNames = [...]string{"", "drew", "discarded", "placed", "deployed", "passed", "flew", "landed", "scored", "returned", "turn", "ended"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && k > 0 {
		return eventNames[k]
	}
	return "?"
}

// Event is one outcome. Only the fields its Kind names are meaningful; the others are zero.
type Event struct {
	Kind    EventKind
	Seat    int
	Tile    TileID
	At      Pos
	Rot     Rotation
	Feature int         // feature index on the tile at At
	Roll    int         // Flew: the die, 1 to 3
	Points  int         // Scored
	Scored  FeatureKind // Scored: the kind of feature scored
	Final   bool        // Scored: part of the final scoring
}

// Apply returns the state after e. Player decisions (Drew, Placed, Deployed, Passed, Flew,
// Landed) are checked like the matching move and return the same errors; the consequences a
// move derives (Scored, Returned, NextTurn, Ended) are checked for phase and shape only and
// otherwise trusted, since the engine itself emitted them. Other errors wrap ErrBadEvent.
func (s State) Apply(e Event) (State, error) {
	if err := s.apply(e); err != nil {
		return State{}, err
	}
	return s, nil
}

// Fold applies events in order and returns the last state, or the first error.
func (s State) Fold(events []Event) (State, error) {
	if len(events) > 1 {
		s = s.clone() // then every event changes the copy in place
	}
	for i, e := range events {
		if err := s.apply(e); err != nil {
			return State{}, fmt.Errorf("event %d (%v): %w", i, e, err)
		}
	}
	return s.disown(), nil
}

// apply changes s by e, or returns an error and leaves s as it was. Unless s owns its arrays
// (see State.own) it never writes into one: every slice it changes is copied first.
func (s *State) apply(e Event) error {
	if e.Seat < 0 || e.Seat >= s.players {
		return fmt.Errorf("%w: seat %d", ErrSeat, e.Seat)
	}
	if s.phase == PhaseOver {
		return ErrGameOver
	}
	seatTurn := func() error {
		if e.Seat != s.turn {
			return fmt.Errorf("%w: seat %d, turn %d", ErrNotYourTurn, e.Seat, s.turn)
		}
		return nil
	}
	switch e.Kind {
	case Drew:
		if s.phase != PhaseDraw {
			return fmt.Errorf("%w: draw in %v", ErrWrongPhase, s.phase)
		}
		if err := seatTurn(); err != nil {
			return err
		}
		if s.stack.Count(e.Tile) == 0 {
			return fmt.Errorf("%w: %v", ErrNotInStack, e.Tile)
		}
		s.stack[e.Tile]--
		s.tile = e.Tile
		s.phase = PhasePlace
	case Discarded:
		if s.phase != PhasePlace || e.Tile != s.tile || e.Seat != s.turn {
			return fmt.Errorf("%w: discard of %v", ErrBadEvent, e.Tile)
		}
		if s.canPlace(s.tile) {
			return fmt.Errorf("%w: %v fits somewhere", ErrBadEvent, e.Tile)
		}
		s.tile = NoTile
		s.phase = PhaseDraw
	case Placed:
		if s.phase != PhasePlace {
			return fmt.Errorf("%w: place in %v", ErrWrongPhase, s.phase)
		}
		if err := seatTurn(); err != nil {
			return err
		}
		if e.Tile != s.tile {
			return fmt.Errorf("%w: placed %v, drawn %v", ErrBadEvent, e.Tile, s.tile)
		}
		if err := s.fits(s.tile, e.Rot, e.At); err != nil {
			return err
		}
		s.placeTile(s.tile, e.Rot, e.At)
		s.tile = NoTile
		s.phase = PhaseFollower
	case Deployed:
		if s.phase != PhaseFollower {
			return fmt.Errorf("%w: deploy in %v", ErrWrongPhase, s.phase)
		}
		if err := seatTurn(); err != nil {
			return err
		}
		if e.At != s.tiles[len(s.tiles)-1].at {
			return fmt.Errorf("%w: not the tile just placed", ErrNoSpot)
		}
		if err := s.canDeploy(e.Feature); err != nil {
			return err
		}
		s.addFollower(s.nodeOf(len(s.tiles)-1, e.Feature), e.Seat)
		s.phase = PhaseScoring
	case Passed:
		if s.phase != PhaseFollower {
			if s.phase == PhaseLanding {
				return ErrMustLand
			}
			return fmt.Errorf("%w: pass in %v", ErrWrongPhase, s.phase)
		}
		if err := seatTurn(); err != nil {
			return err
		}
		s.phase = PhaseScoring
	case Flew:
		if s.phase != PhaseFollower {
			return fmt.Errorf("%w: fly in %v", ErrWrongPhase, s.phase)
		}
		if err := seatTurn(); err != nil {
			return err
		}
		tgt, err := s.flightTarget(e.Roll)
		if err != nil {
			return err
		}
		if e.At != tgt {
			return fmt.Errorf("%w: flight to %v, expected %v", ErrBadEvent, e.At, tgt)
		}
		s.target = tgt
		s.phase = PhaseLanding
		if s.landingOptions(nil) == 0 {
			s.phase, s.target = PhaseScoring, Pos{}
		}
	case Landed:
		if s.phase != PhaseLanding {
			return fmt.Errorf("%w: land in %v", ErrWrongPhase, s.phase)
		}
		if err := seatTurn(); err != nil {
			return err
		}
		if e.At != s.target {
			return fmt.Errorf("%w: landing at %v, target %v", ErrNoSpot, e.At, s.target)
		}
		if !s.canLand(e.Feature) {
			return fmt.Errorf("%w: feature %d at %v", ErrNoSpot, e.Feature, e.At)
		}
		s.addFollower(s.nodeOf(s.g.at(e.At), e.Feature), e.Seat)
		s.phase, s.target = PhaseScoring, Pos{}
	case Scored:
		if s.phase != PhaseScoring && !(e.Final && s.phase == PhaseDraw && s.stack.empty()) {
			return fmt.Errorf("%w: scoring in %v", ErrBadEvent, s.phase)
		}
		if e.Points < 0 {
			return fmt.Errorf("%w: negative points", ErrBadEvent)
		}
		s.scores[e.Seat] += e.Points
	case Returned:
		if s.phase != PhaseScoring {
			return fmt.Errorf("%w: return in %v", ErrBadEvent, s.phase)
		}
		ti := s.g.at(e.At)
		if ti < 0 || e.Feature < 0 || e.Feature >= len(rotated[s.tiles[ti].t][0].feats) {
			return fmt.Errorf("%w: no segment %v f%d", ErrBadEvent, e.At, e.Feature)
		}
		k := int16(s.nodeOf(ti, e.Feature))
		i := 0
		for i < len(s.followers) && (s.followers[i].node != k || int(s.followers[i].seat) != e.Seat) {
			i++
		}
		if i == len(s.followers) {
			return fmt.Errorf("%w: no follower of %d at %v f%d", ErrBadEvent, e.Seat, e.At, e.Feature)
		}
		var f []follower // nil when the last one leaves, as in a parsed state
		if s.own {
			f = slices.Delete(s.followers, i, i+1)
		} else if len(s.followers) > 1 {
			f = make([]follower, 0, len(s.followers)-1)
			f = append(f, s.followers[:i]...)
			f = append(f, s.followers[i+1:]...)
		}
		s.followers = f
		s.supply[e.Seat]++
	case NextTurn:
		if s.phase != PhaseScoring || e.Seat != (s.turn+1)%s.players || s.stack.empty() {
			return fmt.Errorf("%w: turn to %d", ErrBadEvent, e.Seat)
		}
		s.turn = e.Seat
		s.phase = PhaseDraw
	case Ended:
		if (s.phase != PhaseScoring && s.phase != PhaseDraw) || !s.stack.empty() {
			return fmt.Errorf("%w: end with %d tiles left", ErrBadEvent, s.stack.Len())
		}
		s.phase = PhaseOver
	default:
		return fmt.Errorf("%w: kind %d", ErrBadEvent, e.Kind)
	}
	return nil
}

func (s *State) addFollower(k, seat int) {
	x := follower{node: int16(k), seat: int8(seat)}
	if s.own {
		s.followers = append(s.followers, x)
	} else {
		f := make([]follower, len(s.followers)+1)
		copy(f, s.followers)
		f[len(s.followers)] = x
		s.followers = f
	}
	s.supply[seat]--
}
