package auth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hangarhq/hangar/internal/fault"
	"github.com/hangarhq/hangar/store"
)

// Deleting a player (AdminService.DeletePlayer). The player's row stays as
// a tombstone (store.Deletions says what goes and what stays); the event
// log is never changed. Every node keeps the set of deleted players' ids,
// loaded when it starts and told of each deletion by the revocation that
// ends the player's sessions and, failing that, by reading the latest
// deletions at each re-check of its sessions (SessionOptions.Recheck), so
// that the responses it sends show a deleted player's name as
// store.DeletedName (see DeletedSet.Has).

// ErrPlayerDeleted: the player is deleted: it gets no token, and a backend
// cannot act for it.
var ErrPlayerDeleted = fmt.Errorf("%w: the player is deleted", fault.ErrPermission)

// DeletedSet is the ids of the deleted players that a node keeps: loaded
// when it starts (Load), added to by the deletions it makes and hears of,
// and brought up to the store at each re-check of its sessions. A deletion
// is for ever, so the set only grows, by one id per deletion (which only
// an API key of scope server or admin makes).
type DeletedSet struct {
	st  deletedReader
	log *slog.Logger
	now func() time.Time

	mu  sync.RWMutex
	ids map[string]struct{}
	// readAt is when the set was last read from the store (the node's
	// clock); guarded by mu.
	readAt time.Time
}

// deletedReader is the store's list of deleted players.
type deletedReader interface {
	DeletedPlayers(ctx context.Context, since time.Time) ([]string, error)
}

// deletionSkew is how far before the last read a read of the latest
// deletions starts: the deleting node's clock may be behind this one's,
// and a deletion commits after its time is taken.
const deletionSkew = 5 * time.Minute

func (d *DeletedSet) add(ids ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = make(map[string]struct{}, len(ids))
	}
	for _, id := range ids {
		d.ids[id] = struct{}{}
	}
}

// Load reads the deleted players' ids from the store.
func (d *DeletedSet) Load(ctx context.Context) error {
	return d.read(ctx, time.Time{})
}

// read adds the players deleted at or after since to the set.
func (d *DeletedSet) read(ctx context.Context, since time.Time) error {
	now := d.now()
	ids, err := d.st.DeletedPlayers(ctx, since)
	if err != nil {
		return fmt.Errorf("deleted players: %w", err)
	}
	d.add(ids...)
	d.mu.Lock()
	d.readAt = now
	d.mu.Unlock()
	return nil
}

// latest reads the deletions since the last read (less deletionSkew):
// those a node did not hear of, its revocation notice lost or there being
// no revocation feed.
func (d *DeletedSet) latest(ctx context.Context) {
	d.mu.RLock()
	since := d.readAt.Add(-deletionSkew)
	d.mu.RUnlock()
	if err := d.read(ctx, since); err != nil && ctx.Err() == nil {
		d.log.WarnContext(ctx, "read the latest deleted players", "err", err)
	}
}

// Has says whether player id is deleted.
func (d *DeletedSet) Has(id string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	_, ok := d.ids[id]
	return ok
}

// Any says whether any player is deleted: when none is, responses need no
// look-ups.
func (d *DeletedSet) Any() bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.ids) > 0
}

// IDs returns the deleted players' ids.
func (d *DeletedSet) IDs() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	ids := make([]string, 0, len(d.ids))
	for id := range d.ids {
		ids = append(ids, id)
	}
	return ids
}

// DeletePlayer deletes player p: its sessions end on every node, it gets
// no new token, and every node shows its name as store.DeletedName. It
// returns when p was deleted: a retry returns the first deletion's time.
func (m *Moderation) DeletePlayer(ctx context.Context, p store.Player, reason string) (time.Time, error) {
	at, n, err := m.st.DeletePlayer(ctx, p.ID, m.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return time.Time{}, err
	}
	m.deleted.add(p.ID)
	m.revoke(ctx, store.Revocation{Player: p.ID})
	m.audit(ctx, "delete_player", p, reason, n)
	return at, nil
}

// heard applies a revocation announced by another node; one of a whole
// player may be a deletion, which the store says.
func (a *Authenticator) heard(ctx context.Context, r store.Revocation) {
	a.revoked(r)
	if r.TokenHash != nil || a.deleted.Has(r.Player) {
		return
	}
	acc, err := a.st.Account(ctx, r.Player)
	switch {
	case err != nil:
		a.log.WarnContext(ctx, "read a revoked player", "player", r.Player, "err", err)
	case !acc.Deleted.IsZero():
		a.deleted.add(r.Player)
	}
}

// missed follows a gap in the revocation feed: the cached sessions are
// forgotten and the deleted players read again.
func (a *Authenticator) missed(ctx context.Context) {
	a.gap()
	if err := a.deleted.Load(ctx); err != nil {
		a.log.WarnContext(ctx, "after a gap in the revocation feed", "err", err)
	}
}
