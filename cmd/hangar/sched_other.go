//go:build !linux

package main

import "errors"

// setSched: scheduling policies are Linux's; elsewhere batch is refused
// and normal changes nothing.
func setSched(batch bool) (int, error) {
	if batch {
		return 0, errors.New("--sched batch needs Linux")
	}
	return 0, nil
}
