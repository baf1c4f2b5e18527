// Package notice owns each player's log of notices (its turn has begun, a
// match it sits in started or ended, it was invited): their stored form
// (Encode, Decode), the hub that wakes a node's WatchPlayer streams, the
// reading of a player's log for those streams and for ListNotices, and
// the webhook workers that deliver every notice to an app backend. The
// write path decides which notices a command makes and stores them with
// its events; it tells this package of them after the commit.
//
// notice may import fault, limit, vtcodec, wake, store and api; it imports
// no other Hangar package.
package notice

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/game"
	"github.com/hangarhq/hangar/internal/vtcodec"
	"github.com/hangarhq/hangar/internal/wake"
	"github.com/hangarhq/hangar/store"
)

// Notices: each player's log of what concerns it across its matches (its
// turn has begun, a match it sits in started or ended, it was invited). A
// command's notices are computed on the write path from the match before and
// after it and go to the store with its events (store.Append.Notices), in the
// same transaction: a notice exists exactly when the events that caused it
// do. WatchPlayer follows a player's log by seq, always re-reading the
// store, so a lost wake-up only delays a notice; wake-ups come from this
// node's commits, from other nodes through the feed (a Change naming the
// player) and, with other nodes, from the watch poll. Bots get no notices.
//
// A notice's stored form is a hangar.v1.Notice with only its body set (the
// player, seq, match and time are columns of their own); its kind is the
// name of the body's field. One codec here writes and reads it.

var noticeBody = (&hangarv1.Notice{}).ProtoReflect().Descriptor().Oneofs().ByName("body")

// Kind is the stored kind of n: the name of its body's field. The
// name is looked up once per Go type of body (noticeKinds), not through
// the message's reflection every time: a command's notices are on the
// write path.
func Kind(n *hangarv1.Notice) string {
	t := reflect.TypeOf(n.GetBody())
	if k, ok := noticeKinds.Load(t); ok {
		return k.(string)
	}
	f := n.ProtoReflect().WhichOneof(noticeBody)
	if f == nil {
		return "unknown"
	}
	k := string(f.Name())
	noticeKinds.Store(t, k)
	return k
}

var noticeKinds sync.Map // reflect.Type of a Notice's body -> its kind

// ID is the id of a player's notice seq: "<player>:<seq>".
func ID(player string, seq int64) string { return player + ":" + strconv.FormatInt(seq, 10) }

// Encode is n (PlayerId, MatchId and Body set) as the store keeps
// it.
func Encode(n *hangarv1.Notice, deliver bool) (store.Notice, error) {
	p, err := vtcodec.Bytes(&hangarv1.Notice{Body: n.Body})
	if err != nil {
		return store.Notice{}, err
	}
	return store.Notice{Player: n.GetPlayerId(), Kind: Kind(n), Match: n.GetMatchId(), Payload: p, Deliver: deliver}, nil
}

// Decode turns a stored notice of a match of one of games into the API's
// Notice (one stored before games were named names its game as it was
// then: games upgrades it).
func Decode(games *game.Registry, sn store.Notice) (*hangarv1.Notice, error) {
	n := &hangarv1.Notice{}
	if err := proto.Unmarshal(sn.Payload, n); err != nil {
		return nil, fmt.Errorf("notice %s: %w", ID(sn.Player, sn.Seq), err)
	}
	if err := games.UpgradeNotice(n); err != nil {
		return nil, fmt.Errorf("notice %s: %w", ID(sn.Player, sn.Seq), err)
	}
	if got := Kind(n); got != sn.Kind {
		return nil, fmt.Errorf("notice %s is %q, stored as %q", ID(sn.Player, sn.Seq), got, sn.Kind)
	}
	n.NoticeId, n.PlayerId, n.Seq, n.MatchId = ID(sn.Player, sn.Seq), sn.Player, sn.Seq, sn.Match
	n.Time = timestamppb.New(sn.Time)
	return n, nil
}

// EncodeAll encodes a command's notices for its append; deliver queues
// them for the webhook.
func EncodeAll(ns []*hangarv1.Notice, deliver bool) ([]store.Notice, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	out := make([]store.Notice, len(ns))
	for i, n := range ns {
		var err error
		if out[i], err = Encode(n, deliver); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Hub holds the WatchPlayer streams of a node by player.
type Hub struct {
	mu   sync.Mutex
	subs wake.Set
}

// NewHub returns an empty Hub.
func NewHub() *Hub {
	return &Hub{subs: make(wake.Set)}
}

// Subscribe returns a channel that receives a value after the player's
// log may have grown, and a function to unsubscribe.
func (h *Hub) Subscribe(p string) (<-chan struct{}, func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.subs.Add(p)
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.subs.Remove(p, ch)
	}
}

// Wake wakes the watchers of player p.
func (h *Hub) Wake(p string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs.Wake(p)
}

// WakeAll wakes every watcher (a gap in the feed, the poll).
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs.WakeAll()
}
