package auth

import (
	"context"
	"fmt"
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
// store.DeletedName (see Deleted).

// ErrPlayerDeleted: the player is deleted: it gets no token, and a backend
// cannot act for it.
var ErrPlayerDeleted = fmt.Errorf("%w: the player is deleted", fault.ErrPermission)

// deletedSet is the ids of the deleted players. A deletion is for ever,
// so the set only grows, by one id per deletion (which only an API key of
// scope server or admin makes).
type deletedSet struct {
	mu  sync.RWMutex
	ids map[string]struct{}
	// read is when the set was last read from the store (the node's
	// clock); guarded by mu.
	read time.Time
}

// deletionSkew is how far before the last read a read of the latest
// deletions starts: the deleting node's clock may be behind this one's,
// and a deletion commits after its time is taken.
const deletionSkew = 5 * time.Minute

func (d *deletedSet) add(ids ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = make(map[string]struct{}, len(ids))
	}
	for _, id := range ids {
		d.ids[id] = struct{}{}
	}
}

// LoadDeleted reads the deleted players' ids from the store.
func (a *Authenticator) LoadDeleted(ctx context.Context) error {
	return a.readDeleted(ctx, time.Time{})
}

// readDeleted adds the players deleted at or after since to the set.
func (a *Authenticator) readDeleted(ctx context.Context, since time.Time) error {
	now := a.now()
	ids, err := a.st.DeletedPlayers(ctx, since)
	if err != nil {
		return fmt.Errorf("deleted players: %w", err)
	}
	a.deleted.add(ids...)
	a.deleted.mu.Lock()
	a.deleted.read = now
	a.deleted.mu.Unlock()
	return nil
}

// latestDeleted reads the deletions since the last read (less
// deletionSkew): those a node did not hear of, its revocation notice lost
// or there being no revocation feed.
func (a *Authenticator) latestDeleted(ctx context.Context) {
	a.deleted.mu.RLock()
	since := a.deleted.read.Add(-deletionSkew)
	a.deleted.mu.RUnlock()
	if err := a.readDeleted(ctx, since); err != nil && ctx.Err() == nil {
		a.log.WarnContext(ctx, "read the latest deleted players", "err", err)
	}
}

// Deleted says whether player id is deleted.
func (a *Authenticator) Deleted(id string) bool {
	a.deleted.mu.RLock()
	defer a.deleted.mu.RUnlock()
	_, ok := a.deleted.ids[id]
	return ok
}

// AnyDeleted says whether any player is deleted: when none is, responses
// need no look-ups.
func (a *Authenticator) AnyDeleted() bool {
	a.deleted.mu.RLock()
	defer a.deleted.mu.RUnlock()
	return len(a.deleted.ids) > 0
}

// DeletedIDs returns the deleted players' ids.
func (a *Authenticator) DeletedIDs() []string {
	a.deleted.mu.RLock()
	defer a.deleted.mu.RUnlock()
	ids := make([]string, 0, len(a.deleted.ids))
	for id := range a.deleted.ids {
		ids = append(ids, id)
	}
	return ids
}

// DeletePlayer deletes player p: its sessions end on every node, it gets
// no new token, and every node shows its name as store.DeletedName. It
// returns when p was deleted: a retry returns the first deletion's time.
func (a *Authenticator) DeletePlayer(ctx context.Context, p store.Player, reason string) (time.Time, error) {
	at, n, err := a.st.DeletePlayer(ctx, p.ID, a.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return time.Time{}, err
	}
	a.deleted.add(p.ID)
	a.revoke(ctx, store.Revocation{Player: p.ID})
	a.audit(ctx, "delete_player", p, reason, n)
	return at, nil
}

// heard applies a revocation announced by another node; one of a whole
// player may be a deletion, which the store says.
func (a *Authenticator) heard(ctx context.Context, r store.Revocation) {
	a.revoked(r)
	if r.TokenHash != nil || a.Deleted(r.Player) {
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
	if err := a.LoadDeleted(ctx); err != nil {
		a.log.WarnContext(ctx, "after a gap in the revocation feed", "err", err)
	}
}
