package hub

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// LoopbackHost is the only address any hub listener binds.
const LoopbackHost = "127.0.0.1"

// ErrPortsBusy reports that every port of a list was taken.
var ErrPortsBusy = errors.New("all ports busy")

// Listen binds 127.0.0.1 on the first free port of ports, in order. A single
// 0 asks the OS for a free port. It returns the listener and the port
// actually bound, which is the one to report.
func Listen(ports []int) (net.Listener, int, error) {
	if len(ports) == 0 {
		ports = []int{0}
	}
	var errs []string
	for _, p := range ports {
		if p < 0 || p > 65535 {
			return nil, 0, fmt.Errorf("port %d out of range 1..65535", p)
		}
		ln, err := net.Listen("tcp4", net.JoinHostPort(LoopbackHost, strconv.Itoa(p)))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%d: %v", p, causeOf(err)))
			continue
		}
		return ln, ln.Addr().(*net.TCPAddr).Port, nil
	}
	if len(ports) == 1 {
		return nil, 0, fmt.Errorf("cannot listen on %s:%s", LoopbackHost, errs[0])
	}
	return nil, 0, fmt.Errorf("%w: %s (%s)", ErrPortsBusy, FormatPorts(ports), strings.Join(errs, "; "))
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
