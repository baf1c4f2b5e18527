package archive

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hangarhq/hangar/store"
)

// A record is what a restore needs of an archived match, kept beside its
// export: the match's row, the players it names and its events, exactly
// as the store kept them. It is JSON lines:
//
//	{"format":"hangar.archived-match","version":1,"match":ID,"export_sha256":HEX,"sha256":HEX}
//	{"match":{…the row…}}
//	{"player":{…}}    one per player ("deleted":true for a deleted one)
//	{"event":{…}}     one per event, in order
//
// The first line is the header: the format's name and version, the
// SHA-256 of the export the record sits beside, and the SHA-256 of the
// lines after the header. Byte strings (options, summary, payloads) are
// base64, times RFC 3339 in UTC to the nanosecond.

// Format and Version name the record's format; a reader refuses any other.
const (
	Format  = "hangar.archived-match"
	Version = 1
)

// Errors Decode and Record.CheckExport return.
var (
	// ErrFormat: the data is not a record of this format and version.
	ErrFormat = errors.New("archive: not a record of this format")
	// ErrChecksum: the data, or the export beside it, is not what was
	// written (its SHA-256 differs from the header's).
	ErrChecksum = errors.New("archive: checksum mismatch")
)

// Record is a record: what Encode writes and Decode reads.
type Record struct {
	store.Restore
	// Deleted are the ids of Players that were deleted
	// (store.Deletions) when the match was archived.
	Deleted []string
	// ExportSHA256 is the SHA-256 of the match's export (Decode sets it;
	// Encode takes it of the export).
	ExportSHA256 [sha256.Size]byte
}

type header struct {
	Format       string `json:"format"`
	Version      int    `json:"version"`
	Match        string `json:"match"`
	ExportSHA256 string `json:"export_sha256"`
	SHA256       string `json:"sha256"`
}

type line struct {
	Match  *row    `json:"match,omitempty"`
	Player *player `json:"player,omitempty"`
	Event  *event  `json:"event,omitempty"`
}

type row struct {
	ID        string     `json:"id"`
	Game      string     `json:"game"`
	Status    string     `json:"status"`
	Version   int64      `json:"version"`
	Creator   string     `json:"creator"`
	Players   []string   `json:"players"`
	FreeSeats int        `json:"free_seats"`
	BotTurn   bool       `json:"bot_turn"`
	Deadline  *time.Time `json:"deadline,omitempty"`
	Private   bool       `json:"private"`
	Invited   []string   `json:"invited"`
	Options   []byte     `json:"options"`
	Summary   []byte     `json:"summary"`
	Created   time.Time  `json:"created"`
	Started   *time.Time `json:"started,omitempty"`
	Ended     *time.Time `json:"ended,omitempty"`
}

type player struct {
	ID          string    `json:"id"`
	DisplayName string    `json:"display_name"`
	Created     time.Time `json:"created"`
	Deleted     bool      `json:"deleted,omitempty"`
}

type event struct {
	Seq     int64     `json:"seq"`
	Type    string    `json:"type"`
	Payload []byte    `json:"payload"`
	Author  string    `json:"author"`
	Time    time.Time `json:"time"`
}

func utc(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func local(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Encode is the record of r, beside the match's export.
func Encode(r Record, export []byte) ([]byte, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	m := r.Match
	lines := []line{{Match: &row{ID: m.ID, Game: m.Game, Status: string(m.Status), Version: m.Version,
		Creator: m.Creator, Players: m.Players, FreeSeats: m.FreeSeats, BotTurn: m.BotTurn,
		Deadline: utc(m.Deadline), Private: m.Private, Invited: m.Invited, Options: m.Options,
		Summary: m.Summary, Created: m.Created.UTC(), Started: utc(m.Started), Ended: utc(m.Ended)}}}
	for _, p := range r.Players {
		lines = append(lines, line{Player: &player{ID: p.ID, DisplayName: p.DisplayName, Created: p.Created.UTC(),
			Deleted: slices.Contains(r.Deleted, p.ID)}})
	}
	for _, e := range r.Events {
		lines = append(lines, line{Event: &event{Seq: e.Seq, Type: e.Type, Payload: e.Payload, Author: e.Author, Time: e.Time.UTC()}})
	}
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil, fmt.Errorf("archive: encode match %s: %w", m.ID, err)
		}
	}
	es, bs := sha256.Sum256(export), sha256.Sum256(body.Bytes())
	h, err := json.Marshal(header{Format: Format, Version: Version, Match: m.ID,
		ExportSHA256: hex.EncodeToString(es[:]), SHA256: hex.EncodeToString(bs[:])})
	if err != nil {
		return nil, fmt.Errorf("archive: encode match %s: %w", m.ID, err)
	}
	return append(append(h, '\n'), body.Bytes()...), nil
}

// Decode reads a record. It returns an error wrapping ErrFormat when data
// is not a record of Format and Version, or is malformed, and one wrapping
// ErrChecksum when the lines after the header are not those the header's
// checksum was taken of.
func Decode(data []byte) (Record, error) {
	var r Record
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return r, fmt.Errorf("%w: no header line", ErrFormat)
	}
	var h header
	if err := json.Unmarshal(head, &h); err != nil {
		return r, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	if h.Format != Format || h.Version != Version {
		return r, fmt.Errorf("%w: %q version %d, not %q version %d", ErrFormat, h.Format, h.Version, Format, Version)
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != h.SHA256 {
		return r, fmt.Errorf("%w: the record of match %s", ErrChecksum, h.Match)
	}
	if n, err := hex.Decode(r.ExportSHA256[:], []byte(h.ExportSHA256)); err != nil || n != sha256.Size {
		return r, fmt.Errorf("%w: export_sha256 %q", ErrFormat, h.ExportSHA256)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1)
	seenMatch := false
	for i := 2; sc.Scan(); i++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var l line
		if err := dec.Decode(&l); err != nil {
			return r, fmt.Errorf("%w: line %d: %v", ErrFormat, i, err)
		}
		switch {
		case l.Match != nil && !seenMatch && l.Player == nil && l.Event == nil:
			m := l.Match
			r.Match = store.Match{ID: m.ID, Game: m.Game, Status: store.Status(m.Status), Version: m.Version,
				Creator: m.Creator, Players: m.Players, FreeSeats: m.FreeSeats, BotTurn: m.BotTurn,
				Deadline: local(m.Deadline), Private: m.Private, Invited: m.Invited, Options: m.Options,
				Summary: m.Summary, Created: m.Created, Started: local(m.Started), Ended: local(m.Ended)}
			seenMatch = true
		case l.Player != nil && seenMatch && l.Event == nil && l.Match == nil:
			r.Players = append(r.Players, store.Player{ID: l.Player.ID, DisplayName: l.Player.DisplayName, Created: l.Player.Created})
			if l.Player.Deleted {
				r.Deleted = append(r.Deleted, l.Player.ID)
			}
		case l.Event != nil && seenMatch && l.Player == nil && l.Match == nil:
			e := l.Event
			r.Events = append(r.Events, store.Event{Seq: e.Seq, Type: e.Type, Payload: e.Payload, Author: e.Author, Time: e.Time})
		default:
			return r, fmt.Errorf("%w: line %d is out of place", ErrFormat, i)
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if !seenMatch || r.Match.ID != h.Match {
		return r, fmt.Errorf("%w: no row of match %s", ErrFormat, h.Match)
	}
	return r, nil
}

// CheckExport returns an error wrapping ErrChecksum unless export is the
// export the record was written beside.
func (r Record) CheckExport(export []byte) error {
	if sha256.Sum256(export) != r.ExportSHA256 {
		return fmt.Errorf("%w: the export of match %s", ErrChecksum, r.Match.ID)
	}
	return nil
}
