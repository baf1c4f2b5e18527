//go:build unix

package server

import "syscall"

// fdConnBound is the default bound on open connections: the process's
// descriptor limit less a reserve for the database pool, the store's
// files, the admin listener and outgoing calls (a quarter of the limit,
// and at least 64); 0 when the limit cannot be read or is unlimited.
func fdConnBound() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 || rl.Cur > 1<<30 {
		return 0
	}
	limit := int(rl.Cur)
	reserve := max(64, limit/4)
	if limit <= reserve {
		return 1
	}
	return limit - reserve
}
