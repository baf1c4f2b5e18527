// Package aeroplane is the pure rules engine of Aeroplane Chess (飞行棋, Fēixíngqí) for 2 to 4
// players, as specified in shared/rules/aeroplane-chess.md: the 52-square loop entered 13
// squares apart by the four seats, own-colour jumps of 4, the p18 -> p30 shortcut with its
// crossing capture at the opposite seat's p53, stacks, the third-six penalty, the bounce at the
// centre, and play until one player is left. The default rule set is spec §2 (DefaultOptions);
// every variant of spec §3 is a field of Options.
//
// A State is a comparable 64-byte value without pointers. Chance is input: the caller rolls the
// die and passes the result to Roll; the engine never draws randomness, reads a clock or does
// I/O. A turn is a Roll, then (when the roll has legal moves) a Move chosen from LegalMoves; a
// roll without a legal move is passed automatically, a 6 earns another roll, a third 6 is
// punished, finished and resigned players are skipped. Roll, Move and Resign return the next
// state and the events it caused; folding those events onto the earlier state (Apply, Fold)
// gives the same next state, which is how a match is rebuilt from its stored events. The engine
// itself changes a state only by folding the events it reports. The Append forms write into
// caller buffers and do not allocate.
//
// For self-play and search, StepRoll and StepMove change a state in place, StepChoose lets a
// Chooser (a bot that picks a move by its index among the legal moves) play without the move
// being checked again, and PlayOut plays a game on with Dice and Choosers. None of them
// allocates once its buffers have grown. In the rule sets where the course of an advance does
// not depend on the board (most of them, the default included) the move generator and Move
// look courses up in a table that the general planner builds on first use (courses.go).
//
// Positions are path indices relative to the plane's owner: Hangar (-1), Launch (0, the launch
// area), 1..50 on the shared loop (Loop converts to the seat-independent square 0..51), 51..55
// the home column, Finish (56) the centre.
//
// Where the spec leaves room, the engine decides as follows.
//   - FirstHighestRoll (the default) starts with PhaseStartRoll: the contenders roll once each in
//     seat order from the lowest seat; the tied highest roll again, lowest seat first. Start
//     rolls count for nothing else.
//   - LegalMoves lists a take-off per hangar plane and an advance per unit, so two unmerged
//     planes on one square are two moves; a stack is named by its lowest plane (Move accepts
//     any of its planes). The choice flags of a legal move say what it does, so a forced flight
//     carries Fly and an automatic merge carries Stack.
//   - A bounce that ends where the unit stood (p55 rolling 2) is a legal move.
//   - OvershootReverse: a unit walked back onto the loop lands there as usual (captures, jumps,
//     flight).
//   - StackBlocks: only merged stacks block, and only the forward die walk (not jumps or
//     flights); the unit bounces back off the first blocking stack by its excess steps and may
//     not use the roll if that leaves it no further than where it started; landing exactly on
//     the stack is allowed.
//   - CapturePassOver captures on the squares walked over forwards (die walk and jump, not the
//     flight) in addition to the rest points, so that no two seats ever share a loop square.
//   - StackCapture counts every opposing plane on the square, merged or not; a mover sent home
//     ends its move there and captures made earlier in the move stand.
//   - CrossingBlockedByStack: with a merged opposing stack on the crossing, a unit on p18 moves
//     on as if it had declined the flight.
//   - The third-six penalty is reported even when it sends no plane home.
//   - EndFirstFinisherEnds ranks the unfinished players by progress (the sum of their planes'
//     path indices, hangar counting -1), ties in play order after the winner.
//   - Resign keeps finished planes finished; a player who finished cannot resign.
//
// Notation. Moves: "T<plane>" takes off, "A<plane>" advances the plane's unit, with "+fly",
// "+nojump", "+stack", "+split" for its choices, "pass" passes (Move.String). Events:
// "<kind> key=value…", e.g. "moved seat=0 planes=0 from=10 to=14 die=4 rest=14,18,30"
// (Event.String). States: "0:h,h,0,14 2:h,h,h,h turn=0 phase=move die=6 sixes=1 moved=-
// rank=- resigned=- opts=default" (State.String). Options: "default" or
// "TakeoffRolls:SixOnly,ThirdSix:None" (Options.String). Every notation parses back to the
// same value.
//
// Errors are the sentinels of errors.go; each wraps ErrInvalid (malformed input) or ErrIllegal
// (a rule forbids it now).
package aeroplane
