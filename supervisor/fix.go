package supervisor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/hub"
)

// fixFor says what the user can do about an adapter that cannot start
// with err: for a port in use, which config key names that port (the
// error itself says who holds it, when this system can tell); for
// anything else, where to read more. Both end with the way to run the hub
// without the adapter.
func fixFor(name string, keys []adapters.PortKey, err error) string {
	disable := fmt.Sprintf("set adapters.%s.enabled: false to run the hub without it", name)
	if !portBusy(err) {
		return fmt.Sprintf("see hub logs; %s", disable)
	}
	var port int
	var held *hub.HeldError
	var pe *hub.PortError
	switch {
	case errors.As(err, &held):
		port = held.Port
	case errors.As(err, &pe):
		port = pe.Port
	}
	// The keys naming that port; all of them when none does.
	var named, all []string
	for _, k := range keys {
		key := fmt.Sprintf("adapters.%s.%s", name, k.Key)
		all = append(all, key)
		if port == 0 || slices.Contains(k.Ports, port) {
			named = append(named, key)
		}
	}
	if len(named) == 0 {
		named = all
	}
	what := "the port"
	if port != 0 {
		what = fmt.Sprintf("port %d", port)
	}
	if len(named) == 0 {
		return fmt.Sprintf("free %s, or %s", what, disable)
	}
	return fmt.Sprintf("free %s, set %s to a free port (0: any), or %s",
		what, strings.Join(named, " or "), disable)
}

// portBusy: err is a failure to bind because the port is in use.
func portBusy(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, hub.ErrPortsBusy) || errors.Is(err, hub.ErrPortHeld)
}
