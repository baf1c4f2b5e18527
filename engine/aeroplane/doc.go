// Package aeroplane is the pure rules engine of Aeroplane Chess (飞行棋, Fēixíngqí) for 2 to 4
// players, as specified in shared/rules/aeroplane-chess.md: the 52-square loop entered 13
// squares apart by the four seats, own-colour jumps of 4, the p18 -> p30 shortcut with its
// crossing capture at the opposite seat's p53, stacks, the third-six penalty, the bounce at the
// centre, and play until one player is left. The default rule set is spec §2 (DefaultOptions);
// every variant of spec §3 is a field of Options.
//
// A State is a comparable value without pointers. Chance is input: the caller rolls the die
// and passes the result to Roll; the engine never draws randomness, reads a clock or does I/O.
// A turn is a Roll, then (when the roll has legal moves) a Move chosen from LegalMoves; a roll
// without a legal move is passed automatically, a 6 earns another roll, a third 6 is punished,
// finished and resigned players are skipped. Roll, Move and Resign return the next state and
// the events it caused; folding those events onto the earlier state (Apply, Fold) gives the
// same next state, which is how a match is rebuilt from its stored events. The Append* forms
// write into caller buffers and do not allocate.
//
// Positions are path indices relative to the plane's owner: Hangar (-1), Launch (0, the launch
// area), 1..50 on the shared loop (Loop converts to the seat-independent square 0..51), 51..55
// the home column, Finish (56) the centre.
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
