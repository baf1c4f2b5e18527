package aeroplane

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	engine "github.com/hangarhq/hangar/engine/aeroplane"
)

// apiValues is the number of values of an API enum, UNSPECIFIED left out.
func apiValues(e protoreflect.EnumDescriptor) int { return e.Values().Len() - 1 }

// TestEnumsPinned pins every engine enum to its API enum: each pair below
// must be numbered alike (the API counting from 1 where its 0 is
// UNSPECIFIED), and each table must cover both enums, so that a value added
// on one side only fails here instead of converting to the wrong value.
func TestEnumsPinned(t *testing.T) {
	type pair struct {
		eng int
		api protoreflect.Enum
	}
	check := func(name string, offset int, pairs []pair, valid func(v int) bool) {
		t.Helper()
		for _, p := range pairs {
			if p.eng+offset != int(p.api.Number()) {
				t.Errorf("%s: engine %d is API %v (%d)", name, p.eng, p.api, p.api.Number())
			}
		}
		if n := apiValues(pairs[0].api.Descriptor()); n != len(pairs) {
			t.Errorf("%s: the API has %d values, the table %d", name, n, len(pairs))
		}
		if valid != nil && valid(len(pairs)) { // the value after the last
			t.Errorf("%s: the engine has more values than the table's %d", name, len(pairs))
		}
	}
	opt := func(set func(*engine.Options, int)) func(int) bool {
		return func(v int) bool {
			o := engine.DefaultOptions()
			set(&o, v)
			return o.Validate(4) == nil
		}
	}
	check("TakeoffRolls", 1, []pair{
		{int(engine.TakeoffEven), aeroplanev1.TakeoffRolls_TAKEOFF_ROLLS_EVEN},
		{int(engine.TakeoffSixOnly), aeroplanev1.TakeoffRolls_TAKEOFF_ROLLS_SIX_ONLY},
		{int(engine.TakeoffFiveOrSix), aeroplanev1.TakeoffRolls_TAKEOFF_ROLLS_FIVE_OR_SIX},
	}, opt(func(o *engine.Options, v int) { o.TakeoffRolls = engine.TakeoffRolls(v) }))
	check("ThirdSix", 1, []pair{
		{int(engine.ThirdSixReturnMovedBySixes), aeroplanev1.ThirdSix_THIRD_SIX_RETURN_MOVED_BY_SIXES},
		{int(engine.ThirdSixReturnAllActive), aeroplanev1.ThirdSix_THIRD_SIX_RETURN_ALL_ACTIVE},
		{int(engine.ThirdSixReturnAllInclFinished), aeroplanev1.ThirdSix_THIRD_SIX_RETURN_ALL_INCL_FINISHED},
		{int(engine.ThirdSixNone), aeroplanev1.ThirdSix_THIRD_SIX_NONE},
	}, opt(func(o *engine.Options, v int) { o.ThirdSix = engine.ThirdSix(v) }))
	check("Overshoot", 1, []pair{
		{int(engine.OvershootBounce), aeroplanev1.Overshoot_OVERSHOOT_BOUNCE},
		{int(engine.OvershootBlock), aeroplanev1.Overshoot_OVERSHOOT_BLOCK},
		{int(engine.OvershootReverse), aeroplanev1.Overshoot_OVERSHOOT_REVERSE},
		{int(engine.OvershootFinish), aeroplanev1.Overshoot_OVERSHOOT_FINISH},
	}, opt(func(o *engine.Options, v int) { o.Overshoot = engine.Overshoot(v) }))
	check("StackMode", 1, []pair{
		{int(engine.StackByChoice), aeroplanev1.StackMode_STACK_MODE_OPTIONAL},
		{int(engine.StackAuto), aeroplanev1.StackMode_STACK_MODE_AUTO},
		{int(engine.StackNever), aeroplanev1.StackMode_STACK_MODE_NEVER},
	}, opt(func(o *engine.Options, v int) { o.StackOptional = engine.Stacking(v) }))
	check("StackCapture", 1, []pair{
		{int(engine.StackCaptureAll), aeroplanev1.StackCapture_STACK_CAPTURE_ALL},
		{int(engine.StackCaptureAttackerReturns), aeroplanev1.StackCapture_STACK_CAPTURE_ATTACKER_RETURNS},
		{int(engine.StackCaptureMutual), aeroplanev1.StackCapture_STACK_CAPTURE_MUTUAL},
		{int(engine.StackCaptureByCount), aeroplanev1.StackCapture_STACK_CAPTURE_BY_COUNT},
	}, opt(func(o *engine.Options, v int) { o.StackCapture = engine.StackCapture(v) }))
	check("CaptureMode", 1, []pair{
		{int(engine.CaptureRestPointsOnly), aeroplanev1.CaptureMode_CAPTURE_MODE_REST_POINTS_ONLY},
		{int(engine.CapturePassOver), aeroplanev1.CaptureMode_CAPTURE_MODE_PASS_OVER},
	}, opt(func(o *engine.Options, v int) { o.CaptureMode = engine.CaptureMode(v) }))
	check("EndRule", 1, []pair{
		{int(engine.EndPlayToLast), aeroplanev1.EndRule_END_RULE_PLAY_TO_LAST},
		{int(engine.EndFirstFinisherEnds), aeroplanev1.EndRule_END_RULE_FIRST_FINISHER_ENDS},
	}, opt(func(o *engine.Options, v int) { o.EndRule = engine.EndRule(v) }))
	check("FirstPlayer", 1, []pair{
		{int(engine.FirstHighestRoll), aeroplanev1.FirstPlayer_FIRST_PLAYER_HIGHEST_ROLL},
		{int(engine.FirstSeat0), aeroplanev1.FirstPlayer_FIRST_PLAYER_SEAT0},
		{int(engine.FirstGiven), aeroplanev1.FirstPlayer_FIRST_PLAYER_GIVEN},
	}, opt(func(o *engine.Options, v int) { o.FirstPlayer = engine.FirstPlayer(v) }))
	check("Phase", 1, []pair{
		{int(engine.PhaseStartRoll), aeroplanev1.Phase_PHASE_START_ROLL},
		{int(engine.PhaseRoll), aeroplanev1.Phase_PHASE_ROLL},
		{int(engine.PhaseMove), aeroplanev1.Phase_PHASE_MOVE},
		{int(engine.PhaseOver), aeroplanev1.Phase_PHASE_OVER},
	}, func(v int) bool { return engine.Phase(v).String() != "?" })
	check("MoveKind", 0, []pair{
		{int(engine.TakeOff), aeroplanev1.MoveKind_MOVE_KIND_TAKE_OFF},
		{int(engine.Advance), aeroplanev1.MoveKind_MOVE_KIND_ADVANCE},
		{int(engine.Pass), aeroplanev1.MoveKind_MOVE_KIND_PASS},
	}, nil)
	events := []pair{
		{int(engine.EvRolled), aeroplanev1.EventKind_EVENT_KIND_ROLLED},
		{int(engine.EvPassed), aeroplanev1.EventKind_EVENT_KIND_PASSED},
		{int(engine.EvTookOff), aeroplanev1.EventKind_EVENT_KIND_TOOK_OFF},
		{int(engine.EvMoved), aeroplanev1.EventKind_EVENT_KIND_MOVED},
		{int(engine.EvJumped), aeroplanev1.EventKind_EVENT_KIND_JUMPED},
		{int(engine.EvFlew), aeroplanev1.EventKind_EVENT_KIND_FLEW},
		{int(engine.EvCaptured), aeroplanev1.EventKind_EVENT_KIND_CAPTURED},
		{int(engine.EvStacked), aeroplanev1.EventKind_EVENT_KIND_STACKED},
		{int(engine.EvFinished), aeroplanev1.EventKind_EVENT_KIND_FINISHED},
		{int(engine.EvPlaced), aeroplanev1.EventKind_EVENT_KIND_PLACED},
		{int(engine.EvPenalty), aeroplanev1.EventKind_EVENT_KIND_PENALTY},
		{int(engine.EvTurnPassed), aeroplanev1.EventKind_EVENT_KIND_TURN_PASSED},
		{int(engine.EvGameOver), aeroplanev1.EventKind_EVENT_KIND_GAME_OVER},
		{int(engine.EvResigned), aeroplanev1.EventKind_EVENT_KIND_RESIGNED},
		{int(engine.EvStartTie), aeroplanev1.EventKind_EVENT_KIND_START_TIE},
		{int(engine.EvFirstPlayer), aeroplanev1.EventKind_EVENT_KIND_FIRST_PLAYER},
	}
	check("EventKind", 0, events, func(v int) bool { return !strings.HasPrefix(engine.EventKind(v+1).String(), "?") })
}
