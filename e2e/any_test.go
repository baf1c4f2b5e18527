package e2e

import (
	"context"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	carcassonnev1 "github.com/hangarhq/hangar/api/hangar/carcassonne/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// The games' own messages travel in google.protobuf.Any: these pack and
// unpack them for the tests.

// packed is m in an Any.
func packed(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}

// unpack is the message a holds when it is a T, else T's nil.
func unpack[T proto.Message](a *anypb.Any) T {
	var zero T
	if a == nil {
		return zero
	}
	m := zero.ProtoReflect().New().Interface()
	if !a.MessageIs(m) || proto.Unmarshal(a.GetValue(), m) != nil {
		return zero
	}
	return m.(T)
}

// unpackAll are the T messages of as (others left out).
func unpackAll[T proto.Message](as []*anypb.Any) []T {
	var out []T
	for _, a := range as {
		var zero T
		if m := unpack[T](a); any(m) != any(zero) {
			out = append(out, m)
		}
	}
	return out
}

// aeroState and carcState are a match's state, of its game (nil for the
// other game's, or none).
func aeroState(m *hangarv1.Match) *aeroplanev1.State { return unpack[*aeroplanev1.State](m.GetState()) }
func carcState(m *hangarv1.Match) *carcassonnev1.State {
	return unpack[*carcassonnev1.State](m.GetState())
}

// aeroEvent and carcEvent are a game's event (nil for a platform event or
// the other game's).
func aeroEvent(ev *hangarv1.Event) *aeroplanev1.Event {
	return unpack[*aeroplanev1.Event](ev.GetGame())
}
func carcEvent(ev *hangarv1.Event) *carcassonnev1.Event {
	return unpack[*carcassonnev1.Event](ev.GetGame())
}

// aeroOptions and carcOptions are options for CreateMatch and Enqueue.
func aeroOptions(o *aeroplanev1.Options) *anypb.Any   { return packed(o) }
func carcOptions(o *carcassonnev1.Options) *anypb.Any { return packed(o) }

// autoRoll are Aeroplane Chess options with auto_roll on.
func autoRoll() *anypb.Any { return aeroOptions(&aeroplanev1.Options{AutoRoll: true}) }

// aeroMoves and carcMoves are the moves among legal actions.
func aeroMoves(as []*anypb.Any) []*aeroplanev1.Move   { return unpackAll[*aeroplanev1.Move](as) }
func carcMoves(as []*anypb.Any) []*carcassonnev1.Move { return unpackAll[*carcassonnev1.Move](as) }

// isRoll reports whether a is Aeroplane Chess's Roll.
func isRoll(a *anypb.Any) bool { return a.MessageIs(&aeroplanev1.Roll{}) }

// rollAction is the Roll action.
var rollAction = packed(&aeroplanev1.Roll{})

// roll acts a Roll for the client in match id at version.
func (c *client) roll(ctx context.Context, id string, version int64) (*hangarv1.ActResponse, error) {
	return c.moves.Act(ctx, &hangarv1.ActRequest{MatchId: id, ExpectedVersion: version, RequestId: reqID(), Action: rollAction})
}

// move acts a move (a game's action message) for the client in match id at
// version.
func (c *client) move(ctx context.Context, id string, version int64, mv proto.Message) (*hangarv1.ActResponse, error) {
	return c.moves.Act(ctx, &hangarv1.ActRequest{MatchId: id, ExpectedVersion: version, RequestId: reqID(), Action: packed(mv)})
}
