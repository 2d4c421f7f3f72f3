package hub

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"github.com/hubdev/hub/hub/portowner"
)

// LoopbackHost is the only address any hub listener binds.
const LoopbackHost = "127.0.0.1"

// ErrPortsBusy reports that every port of a list was taken.
var ErrPortsBusy = errors.New("all ports busy")

// ErrPortHeld reports a port of a list held by another user, or by a
// socket whose owner the kernel's table does not show (see Walk).
var ErrPortHeld = errors.New("port held by another user")

// HeldError is Walk's refusal to go past a port it cannot show is ours.
type HeldError struct {
	Port int
	// Owner holds the port; nil when the socket table names no owner
	// (then Err says why).
	Owner *portowner.Owner
	Err   error
}

func (e *HeldError) Error() string {
	addr := net.JoinHostPort(LoopbackHost, strconv.Itoa(e.Port))
	if e.Owner != nil {
		return fmt.Sprintf("%s is held by another user (%s)", addr, e.Owner)
	}
	if errors.Is(e.Err, portowner.ErrNotFound) {
		return fmt.Sprintf("%s is in use by a socket the kernel's socket table does not list (bound but not listening?), so whose it is cannot be checked", addr)
	}
	return fmt.Sprintf("%s is in use and whose it is cannot be checked: %v", addr, e.Err)
}

// Unwrap makes errors.Is(err, ErrPortHeld) true.
func (e *HeldError) Unwrap() error { return ErrPortHeld }

// PortError is Listen's failure to bind a one-port list. It unwraps to
// the bind error, so errors.Is(err, syscall.EADDRINUSE) tells a busy port.
type PortError struct {
	Port int
	msg  string
	err  error
}

func (e *PortError) Error() string { return e.msg }
func (e *PortError) Unwrap() error { return e.err }

// Skipped is a port of the list that Walk went past because it was in use.
type Skipped struct {
	Port int
	// Owner holds it, always this user (another user's stops the walk);
	// zero when Unchecked.
	Owner portowner.Owner
	// Unchecked: this system cannot say who holds it (portowner.ErrUnknown).
	Unchecked bool
}

// String says why the port was skipped: "8787 is held by pid 1234 (node),
// yours".
func (s Skipped) String() string {
	if s.Unchecked {
		return fmt.Sprintf("%d is in use and this system cannot say by whom", s.Port)
	}
	return fmt.Sprintf("%d is held by %s", s.Port, s.Owner)
}

// Listen binds 127.0.0.1 on the first free port of ports, in order. A single
// 0 asks the OS for a free port. It returns the listener and the port
// actually bound, which is the one to report. It walks past a busy port
// only when that port is ours; see Walk.
func Listen(ports []int) (net.Listener, int, error) {
	ln, port, _, err := Walk(ports)
	return ln, port, err
}

// Walk is Listen that also returns the ports it went past. Whatever dials
// such a list dials it in the same order (the Stitch Slop tab walks
// 8787-8790), so a busy port reaches its holder before any later one. Walk
// therefore looks the holder up in the kernel's socket table (package
// portowner) before going on: a port of this user's (a stale bridge of
// ours) is skipped as before; one of another user's, or one whose socket
// the table does not list (bound, not listening: it can start listening
// once we have walked on), stops the walk with a *HeldError. Where this
// system has no table to read (portowner.ErrUnknown) the walk goes on and
// the skipped port says its owner was not checked, for the caller to
// report.
func Walk(ports []int) (net.Listener, int, []Skipped, error) {
	return walker{owner: portowner.Listener}.walk(ports)
}

// walker is Walk with its owner lookup injectable (tests).
type walker struct {
	owner func(addr netip.Addr, port int) (portowner.Owner, error)
}

func (w walker) walk(ports []int) (net.Listener, int, []Skipped, error) {
	if len(ports) == 0 {
		ports = []int{0}
	}
	var errs []string
	var skipped []Skipped
	var lastErr error
	for _, p := range ports {
		if p < 0 || p > 65535 {
			return nil, 0, nil, fmt.Errorf("port %d out of range 1..65535", p)
		}
		ln, err := listenPort(p)
		if err == nil {
			return ln, ln.Addr().(*net.TCPAddr).Port, skipped, nil
		}
		lastErr = err
		if !errors.Is(err, syscall.EADDRINUSE) {
			errs = append(errs, fmt.Sprintf("%d: %v", p, causeOf(err)))
			continue
		}
		o, lerr := w.owner(netip.MustParseAddr(LoopbackHost), p)
		if errors.Is(lerr, portowner.ErrNotFound) {
			// It may have closed between our bind and the look: bind
			// again, and look again if it is still in use.
			if ln, err = listenPort(p); err == nil {
				return ln, ln.Addr().(*net.TCPAddr).Port, skipped, nil
			}
			if errors.Is(err, syscall.EADDRINUSE) {
				o, lerr = w.owner(netip.MustParseAddr(LoopbackHost), p)
			} else {
				errs = append(errs, fmt.Sprintf("%d: %v", p, causeOf(err)))
				continue
			}
		}
		switch {
		case errors.Is(lerr, portowner.ErrUnknown):
			skipped = append(skipped, Skipped{Port: p, Unchecked: true})
			errs = append(errs, fmt.Sprintf("%d: %v (owner not checked)", p, causeOf(err)))
		case lerr != nil:
			return nil, 0, nil, &HeldError{Port: p, Err: lerr}
		case !o.Mine():
			o = portowner.Resolve(o)
			return nil, 0, nil, &HeldError{Port: p, Owner: &o}
		default:
			o = portowner.Resolve(o)
			skipped = append(skipped, Skipped{Port: p, Owner: o})
			errs = append(errs, fmt.Sprintf("%d: %v (held by %s)", p, causeOf(err), o))
		}
	}
	if len(ports) == 1 {
		return nil, 0, skipped, &PortError{Port: ports[0], msg: fmt.Sprintf("cannot listen on %s:%s", LoopbackHost, errs[0]), err: lastErr}
	}
	return nil, 0, skipped, fmt.Errorf("%w: %s (%s)", ErrPortsBusy, FormatPorts(ports), strings.Join(errs, "; "))
}

func listenPort(p int) (net.Listener, error) {
	return net.Listen("tcp4", net.JoinHostPort(LoopbackHost, strconv.Itoa(p)))
}

// causeOf trims net.OpError's address prefix to the useful cause.
func causeOf(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "bind") {
		s = s[i+2:]
	}
	return s
}

// FormatPorts renders a port list compactly: "8787-8790", "4317", "1,5".
func FormatPorts(ports []int) string {
	if len(ports) == 0 {
		return "-"
	}
	contiguous := true
	for i := 1; i < len(ports); i++ {
		if ports[i] != ports[i-1]+1 {
			contiguous = false
		}
	}
	if contiguous && len(ports) > 1 {
		return fmt.Sprintf("%d-%d", ports[0], ports[len(ports)-1])
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}
