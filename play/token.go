package play

import (
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is where the client keeps the token of the player it created
// as name on the server at addr: one file per server and name under dir
// (the user's configuration directory, os.UserConfigDir).
func TokenFile(dir, addr, name string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
				return r
			}
			return '_'
		}, s)
	}
	return filepath.Join(dir, "hangar", "tokens", clean(addr)+"_"+clean(name))
}

// readToken returns the token kept in path, or "" when there is none.
func readToken(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// writeToken keeps a token in path, readable by the user alone: it is a
// password.
func writeToken(path, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(token+"\n"), 0o600)
}
