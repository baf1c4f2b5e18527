package match

import (
	"crypto/sha256"
	"crypto/subtle"
	"slices"

	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
)

// InviteCode is a live invite code of a match: its id and the SHA-256 of
// the code.
type InviteCode struct {
	ID   string
	hash []byte
}

// InviteCodes are a match's live invite codes, oldest first.
type InviteCodes []InviteCode

// record folds an InviteCodeCreated or an InviteCodeRevoked onto cs.
func (cs *InviteCodes) record(ev *hangarv1.Event) {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_InviteCodeCreated:
		*cs = append(*cs, InviteCode{ID: b.InviteCodeCreated.GetCodeId(), hash: b.InviteCodeCreated.GetCodeSha256()})
	case *hangarv1.Event_InviteCodeRevoked:
		*cs = slices.DeleteFunc(*cs, func(c InviteCode) bool { return c.ID == b.InviteCodeRevoked.GetCodeId() })
	}
}

// ID returns the id of the live invite code code, or "".
func (cs InviteCodes) ID(code string) string {
	if code == "" {
		return ""
	}
	h := sha256.Sum256([]byte(code))
	for _, c := range cs {
		if subtle.ConstantTimeCompare(c.hash, h[:]) == 1 {
			return c.ID
		}
	}
	return ""
}

// ids are the ids of the live codes, oldest first.
func (cs InviteCodes) ids() []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}
