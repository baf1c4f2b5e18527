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

// recordInvitation folds an invitation event onto m.
func (m *Match) recordInvitation(ev *hangarv1.Event) {
	switch b := ev.Body.(type) {
	case *hangarv1.Event_InviteCodeCreated:
		m.Codes = append(m.Codes, InviteCode{ID: b.InviteCodeCreated.GetCodeId(), hash: b.InviteCodeCreated.GetCodeSha256()})
	case *hangarv1.Event_InviteCodeRevoked:
		m.Codes = slices.DeleteFunc(m.Codes, func(c InviteCode) bool { return c.ID == b.InviteCodeRevoked.GetCodeId() })
	case *hangarv1.Event_InvitationDeclined:
		m.Invited = slices.DeleteFunc(m.Invited, func(p string) bool { return p == b.InvitationDeclined.GetPlayerId() })
	}
}

// CodeID returns the id of m's live invite code code, or "".
func (m *Match) CodeID(code string) string {
	if code == "" {
		return ""
	}
	h := sha256.Sum256([]byte(code))
	for _, c := range m.Codes {
		if subtle.ConstantTimeCompare(c.hash, h[:]) == 1 {
			return c.ID
		}
	}
	return ""
}

// codeIDs are the ids of m's live codes, oldest first.
func (m *Match) codeIDs() []string {
	var ids []string
	for _, c := range m.Codes {
		ids = append(ids, c.ID)
	}
	return ids
}
