package match

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/store"
)

// ErrBadTimeControl refuses a match's clock settings that are out of range
// or contradict each other; its message says what is allowed.
var ErrBadTimeControl = fmt.Errorf("%w: bad clock settings", fault.ErrInvalid)

// Bounds of the clock settings a request may choose.
const (
	minTurn      = time.Second
	maxTurn      = 30 * 24 * time.Hour
	maxIncrement = 24 * time.Hour
	maxTimeouts  = 1000
)

// Clock is a match's clock and bot settings as a request chooses them
// (CreateMatchRequest, EnqueueRequest).
type Clock struct {
	TurnTime          *durationpb.Duration
	TimeoutsBeforeBot int32
	BotLevel          hangarv1.BotLevel
	TimeControl       *hangarv1.TimeControl
}

// IsZero says whether c chooses nothing (no clock, the default bot).
func (c Clock) IsZero() bool {
	return c.TurnTime == nil && c.TimeoutsBeforeBot == 0 && c.BotLevel == 0 && c.TimeControl == nil
}

// Check returns an error wrapping ErrBadTimeControl (INVALID_ARGUMENT) when
// c is not a clock a match may have, saying what is allowed.
func (c Clock) Check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadTimeControl}, a...)...)
	}
	inRange := func(d *durationpb.Duration, lo, hi time.Duration) bool {
		return d != nil && d.IsValid() && d.AsDuration() >= lo && d.AsDuration() <= hi
	}
	if c.TurnTime != nil && !inRange(c.TurnTime, minTurn, maxTurn) {
		return bad("turn_time must be 1s to 30 days")
	}
	if _, ok := hangarv1.BotLevel_name[int32(c.BotLevel)]; !ok {
		return bad("unknown bot_level")
	}
	if b := c.TimeoutsBeforeBot; b < 0 || b > maxTimeouts || (b > 0 && c.TurnTime == nil) {
		return bad("timeouts_before_bot must be 0 to 1000, and needs turn_time")
	}
	tc := c.TimeControl
	if tc == nil {
		return nil
	}
	if c.TurnTime != nil {
		return bad("set turn_time or time_control, not both")
	}
	if _, ok := hangarv1.TimeoutPolicy_name[int32(tc.GetTimeoutPolicy())]; !ok {
		return bad("unknown timeout_policy")
	}
	switch tc.GetKind() {
	case hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE:
		if !inRange(tc.GetPerMove(), minTurn, maxTurn) {
			return bad("a per-move time control needs per_move of 1s to 30 days")
		}
		if tc.GetInitial() != nil || tc.GetIncrement() != nil {
			return bad("a per-move time control takes no initial or increment")
		}
	case hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT, hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK:
		if !inRange(tc.GetInitial(), minTurn, maxTurn) {
			return bad("an increment or bank time control needs initial of 1s to 30 days")
		}
		if tc.GetPerMove() != nil {
			return bad("an increment or bank time control takes no per_move")
		}
		inc := tc.GetIncrement()
		if tc.GetKind() == hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK && inc != nil {
			return bad("a bank time control takes no increment")
		}
		if inc != nil && !inRange(inc, 0, maxIncrement) {
			return bad("increment must be 0 to 1 day")
		}
	default:
		return bad("time_control.kind must be PER_MOVE, INCREMENT or BANK")
	}
	if tc.GetPauseWeekends() && !IsCorrespondence(tc) {
		return bad("pause_weekends needs a correspondence time control: per_move or initial of a day or more")
	}
	return checkControlReminders(tc)
}

// checkControlReminders checks the reminders of tc, a time control that
// is otherwise valid.
func checkControlReminders(tc *hangarv1.TimeControl) error {
	if tc.GetNoReminders() && len(tc.GetReminders()) > 0 {
		return badClock("set reminders or no_reminders, not both")
	}
	if len(tc.GetReminders()) > maxReminders {
		return badClock("at most 5 reminders")
	}
	rs := make([]time.Duration, len(tc.GetReminders()))
	for i, r := range tc.GetReminders() {
		if !r.IsValid() {
			return badClock("each reminder must be 1s or more")
		}
		rs[i] = r.AsDuration()
	}
	turn := tc.GetPerMove().AsDuration()
	if tc.GetKind() != hangarv1.TimeControlKind_TIME_CONTROL_KIND_PER_MOVE {
		turn = tc.GetInitial().AsDuration()
	}
	return CheckReminders(rs, turn)
}

// turnClock is a match's turn clock as the fold keeps it: the turn time
// (0: none) or the time control (nil: none) with its durations, and the
// seat whose turn began at turnStart (turnOn: a seat is to act), as of the
// latest commit but one. The seats' banks, time zones and vacations stay
// with the seats, which the methods that read or charge them are given.
type turnClock struct {
	turnTime                    time.Duration
	tc                          *hangarv1.TimeControl
	perMove, initial, increment time.Duration
	turnSeat                    int32
	turnOn                      bool
	turnStart                   time.Time
}

// timeControl reads the time control of a MatchCreated onto c.
func (c *turnClock) timeControl(tc *hangarv1.TimeControl) {
	if tc == nil {
		return
	}
	c.tc = tc
	c.perMove = tc.GetPerMove().AsDuration()
	c.initial = tc.GetInitial().AsDuration()
	c.increment = tc.GetIncrement().AsDuration()
}

// banks says whether c's time control keeps a bank per seat.
func (c *turnClock) banks() bool {
	k := c.tc.GetKind()
	return k == hangarv1.TimeControlKind_TIME_CONTROL_KIND_INCREMENT || k == hangarv1.TimeControlKind_TIME_CONTROL_KIND_BANK
}

// settle charges the clock of the seat whose turn ended when the turn
// passed to another seat, at t, the time of the commit that passed it:
// seat (on: any) is the seat whose clock runs now (Match.turnNow), and the
// bank charged is in seats. record calls it at each commit's first event
// (events of one commit share their time) with the time of the commit
// before, so that a match folded from its events and one built by its
// commands charge alike, and turns that pass through a seat within one
// commit cost it nothing.
func (c *turnClock) settle(seats []Seat, seat int32, on bool, t time.Time) {
	if on == c.turnOn && (!on || seat == c.turnSeat) {
		return
	}
	if c.turnOn && c.banks() && t.After(c.turnStart) {
		if i := seatIndex(seats, c.turnSeat); i >= 0 {
			seats[i].bank -= c.pauses(seats, i).running(c.turnStart, t)
			seats[i].bank += c.increment
		}
	}
	c.turnSeat, c.turnOn, c.turnStart = seat, on, t
}

// turnNow is the seat whose clock runs now, if any.
func (m *Match) turnNow() (int32, bool) {
	if m.Status != store.StatusActive || m.Play == nil || m.Play.Over() {
		return 0, false
	}
	return m.Play.Turn()
}

// settled is m's clock and seats with its latest commit's turn change
// charged: what the clocks read now.
func (m *Match) settled() (turnClock, []Seat) {
	c, seats := m.clock, append([]Seat(nil), m.Seats...)
	seat, on := m.turnNow()
	c.settle(seats, seat, on, m.last)
	return c, seats
}

// controlDeadline is when the time control's clock of the seat to act
// fires (zero: none runs); c and seats are settled (Match.settled).
func (c *turnClock) controlDeadline(seats []Seat) time.Time {
	if !c.turnOn {
		return time.Time{}
	}
	i := seatIndex(seats, c.turnSeat)
	if !c.banks() {
		return c.pauses(seats, i).deadline(c.turnStart, c.perMove)
	}
	if i < 0 {
		return time.Time{}
	}
	return c.pauses(seats, i).deadline(c.turnStart, seats[i].bank)
}

// showClock puts the time control in pm, and each seat's bank from seats,
// the match's settled seats (nil: none shown, as before the start).
func (c *turnClock) showClock(pm *hangarv1.Match, seats []Seat) {
	pm.TimeControl = c.tc
	if !c.banks() {
		return
	}
	for i, st := range seats {
		if i < len(pm.Seats) {
			pm.Seats[i].TimeLeft = durationpb.New(max(st.bank, 0))
		}
	}
}

// protoTurnTime is c's turn time as MatchCreated has it (nil: none).
func (c *turnClock) protoTurnTime() *durationpb.Duration {
	if c.turnTime <= 0 {
		return nil
	}
	return durationpb.New(c.turnTime)
}

// policy is what a timeout of c does.
func (c *turnClock) policy() hangarv1.TimeoutPolicy {
	if c.tc == nil {
		return hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP
	}
	p := c.tc.GetTimeoutPolicy()
	if p == hangarv1.TimeoutPolicy_TIMEOUT_POLICY_UNSPECIFIED {
		return hangarv1.TimeoutPolicy_TIMEOUT_POLICY_SKIP
	}
	return p
}

// forfeitStep is the step of a timeout that costs the seat (at index i) the
// match (TIMEOUT_POLICY_LOSE), or ends the match abandoned when the policy
// is TIMEOUT_POLICY_ABORT_IF_UNSTARTED and the seat never acted.
func (m *Match) forfeitStep(i int, timedOut *hangarv1.Event) (Step, error) {
	st := m.Seats[i]
	if m.clock.policy() == hangarv1.TimeoutPolicy_TIMEOUT_POLICY_ABORT_IF_UNSTARTED && !st.moved {
		return Events(timedOut, &hangarv1.Event{Body: &hangarv1.Event_MatchEnded{MatchEnded: &hangarv1.MatchEnded{
			Status: hangarv1.MatchStatus_MATCH_STATUS_ABANDONED}}}), nil
	}
	g, gevs, err := m.Play.Resign(st.Seat)
	if err != nil {
		return Step{}, err
	}
	step := Events(timedOut, &hangarv1.Event{Body: &hangarv1.Event_PlayerLeft{PlayerLeft: &hangarv1.PlayerLeft{
		Seat: st.Seat, PlayerId: st.Player, Forfeited: true}}})
	step.Play = g
	return step, step.AddGame(m, gevs)
}

// clockRequest is a request that chooses a match's clock.
type clockRequest interface {
	GetTurnTime() *durationpb.Duration
	GetTimeoutsBeforeBot() int32
	GetBotLevel() hangarv1.BotLevel
	GetTimeControl() *hangarv1.TimeControl
}

// ClockOf is the clock a request chooses.
func ClockOf(r clockRequest) Clock {
	return Clock{TurnTime: r.GetTurnTime(), TimeoutsBeforeBot: r.GetTimeoutsBeforeBot(), BotLevel: r.GetBotLevel(), TimeControl: r.GetTimeControl()}
}
