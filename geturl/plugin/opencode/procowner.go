package opencode

import (
	"errors"
	"net/netip"

	"github.com/hubdev/hub/hub/portowner"
)

// errNoOwner means the listener's owner could not be found (no such
// listener, or its process is not visible to us).
var errNoOwner = errors.New("no visible process owns the listener")

// procListenerOwner implements ProcessOwner from the socket table
// (package portowner): the process holding the listener on host:port, and
// its start time. The process is visible when it runs as our user (or we
// as root), which a loopback OpenCode started by the user does.
func procListenerOwner(host string, port int) (int, string, error) {
	var addr netip.Addr // "localhost": either family
	if host != "localhost" {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return 0, "", err
		}
		addr = a
	}
	o, err := portowner.Listener(addr, port)
	if errors.Is(err, portowner.ErrNotFound) || errors.Is(err, portowner.ErrUnknown) {
		return 0, "", errNoOwner
	}
	if err != nil {
		return 0, "", err
	}
	o = portowner.Resolve(o)
	if o.PID == 0 {
		return 0, "", errNoOwner
	}
	start, err := procStart(o.PID)
	if err != nil {
		return 0, "", err
	}
	return o.PID, start, nil
}
