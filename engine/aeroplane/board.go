package aeroplane

// Board geometry (spec §1). Positions are path indices relative to the plane's owner.
const (
	MaxSeats      = 4  // seats around the board
	PlanesPerSeat = 4  // planes of each player
	LoopLen       = 52 // squares on the shared loop
	SeatOffset    = 13 // seat s+1 enters the loop 13 squares after seat s
	LoopSteps     = 50 // loop squares on each seat's path (p1..p50)
	TurnIn        = 50 // last loop square of a path; the next step enters the home column
	HomeFirst     = 51 // first square of the private home column (51..55)
	Finish        = 56 // the centre
	JumpLen       = 4  // distance between two squares of one colour
	ShortcutFrom  = 18 // start of every seat's flight (own path)
	ShortcutTo    = 30 // end of every seat's flight (own path)
	CrossP        = 53 // the home-column square of the opposite seat that a flight passes over
	Hangar        = -1 // position of a plane in its hangar
	Launch        = 0  // position of a plane in its launch area
)

var colourNames = [4]string{"Red", "Yellow", "Blue", "Green"}

// ColourName returns the suggested colour name of a seat (Red, Yellow, Blue, Green), or "" for
// a seat outside 0..3. Colours are cosmetic; the engine works on seat numbers.
func ColourName(seat int) string {
	if seat < 0 || seat > 3 {
		return ""
	}
	return colourNames[seat]
}

// Loop returns the shared loop square (0..51) of path index p (1..50) of seat, or -1 when p is
// not a loop square or seat is outside 0..3.
func Loop(seat, p int) int {
	if seat < 0 || seat > 3 || p < 1 || p > LoopSteps {
		return -1
	}
	return (SeatOffset*seat + p - 1) % LoopLen
}

// PathIndex returns the path index (1..50) at which seat stands on loop square l, or -1 when
// the seat never stands there (the two loop squares just before its entry) or the arguments
// are out of range.
func PathIndex(seat, l int) int {
	if seat < 0 || seat > 3 || l < 0 || l >= LoopLen {
		return -1
	}
	p := (l-SeatOffset*seat+4*LoopLen)%LoopLen + 1
	if p > LoopSteps {
		return -1
	}
	return p
}

// ColourSeat returns the seat whose colour loop square l has, or -1 if l is outside 0..51.
func ColourSeat(l int) int {
	if l < 0 || l >= LoopLen {
		return -1
	}
	return (l + 3) % 4
}

// OwnColour reports whether path index p is a loop square of its owner's colour
// (p = 2, 6, …, 50).
func OwnColour(p int) bool { return p >= 2 && p <= TurnIn && p%4 == 2 }

// Opposite returns the seat across the board, whose p53 the seat's flight crosses.
func Opposite(seat int) int { return (seat + 2) & 3 }

// sameSq[s][o][p] is the path index of seat o on the loop square of path index p (1..50) of
// seat s, or 0 if o never stands there or p is not a loop square.
var sameSq = func() (t [MaxSeats][MaxSeats][64]int8) {
	for s := range MaxSeats {
		for o := range MaxSeats {
			for p := 1; p <= LoopSteps; p++ {
				if q := PathIndex(o, Loop(s, p)); q > 0 {
					t[s][o][p] = int8(q)
				}
			}
		}
	}
	return t
}()

// sameSquare converts path index p (1..50) of seat s into the path index of seat o on the same
// loop square, or 0 if o never stands there.
func sameSquare(s, o, p int) int { return int(sameSq[s&3][o&3][p&63]) }

func onLoop(p int) bool { return p >= 1 && p <= LoopSteps }
