// Package testport finds ports for the servers tests start, stop and start
// again (nats-server, a throwaway Postgres cluster).
package testport

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"os"
	"strconv"
	"strings"
)

// Free returns a 127.0.0.1 port free now, below the kernel's ephemeral
// range. A server that is killed and started again must get its port back,
// and a port in the ephemeral range may meanwhile be taken by any outgoing
// connection on the machine — even by a client of the dead server, whose
// reconnect can connect to itself when the kernel gives it the server's
// port as its own.
func Free() (int, error) {
	low := 32768 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	base := low / 2
	for range 200 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(low-base)))
		if err != nil {
			return 0, err
		}
		port := base + int(n.Int64())
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("testport: no free port in %d-%d", base, low-1)
}
