// Package loopback says whether a host is this machine: the only place an
// Azure endpoint may be plain http (the simulator), for the config that
// checks an endpoint and the client that opens it alike.
package loopback

import (
	"net"
	"strings"
)

// Host reports a host name or address on this machine.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
