package hub

import (
	"errors"
	"net"
	"strings"
	"testing"
)

func TestListenScansPorts(t *testing.T) {
	// Hold one port, then ask for [held, 0]: the scan must skip the busy one.
	held, heldPort, err := Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if a := held.Addr().(*net.TCPAddr); !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("bound %v, want 127.0.0.1", a.IP)
	}
	ln, port, err := Listen([]int{heldPort, 0})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if port == heldPort || port == 0 {
		t.Fatalf("got port %d; want a fresh one (held %d)", port, heldPort)
	}
	if port != ln.Addr().(*net.TCPAddr).Port {
		t.Fatal("reported port differs from the bound one")
	}
}

func TestListenAllBusy(t *testing.T) {
	a, pa, _ := Listen([]int{0})
	defer a.Close()
	b, pb, _ := Listen([]int{0})
	defer b.Close()
	_, _, err := Listen([]int{pa, pb})
	if !errors.Is(err, ErrPortsBusy) {
		t.Fatalf("err = %v, want ErrPortsBusy", err)
	}
	_, _, err = Listen([]int{pa})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("single busy port: %v", err)
	}
	if _, _, err := Listen([]int{70000}); err == nil {
		t.Fatal("port 70000 accepted")
	}
}

func TestFormatPorts(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{nil, "-"}, {[]int{4317}, "4317"}, {[]int{8787, 8788, 8789, 8790}, "8787-8790"}, {[]int{1, 5}, "1,5"}} {
		if got := FormatPorts(tt.in); got != tt.want {
			t.Errorf("FormatPorts(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
