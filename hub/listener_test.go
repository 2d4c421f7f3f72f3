package hub

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/hubdev/hub/hub/portowner"
	"github.com/hubdev/hub/hub/portowner/portownertest"
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

// TestWalkSkipsOwnPort: a port held by this user (a stale bridge of ours)
// is walked past as before, and named.
func TestWalkSkipsOwnPort(t *testing.T) {
	held, heldPort, err := Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ln, port, skipped, err := Walk([]int{heldPort, 0})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if port == heldPort || len(skipped) != 1 || skipped[0].Port != heldPort {
		t.Fatalf("port %d, skipped %+v", port, skipped)
	}
	if runtime.GOOS == "linux" {
		if o := skipped[0].Owner; !o.Mine() || o.PID != os.Getpid() || !strings.Contains(skipped[0].String(), "yours") {
			t.Fatalf("skipped %+v (%s), want ours, pid %d", o, skipped[0], os.Getpid())
		}
	}
}

// TestWalkOwners drives the walk's decisions with a stubbed owner lookup.
func TestWalkOwners(t *testing.T) {
	held, heldPort, err := Listen([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	other := portowner.Owner{UID: os.Getuid() + 1, User: "mallory"}
	for _, tc := range []struct {
		name    string
		owner   func(netip.Addr, int) (portowner.Owner, error)
		walks   bool   // binds the next port
		unknown bool   // and reports the skipped one as unchecked
		want    string // else: the refusal says this
	}{
		{"another user", func(netip.Addr, int) (portowner.Owner, error) { return other, nil }, false, false, "is held by another user (uid"},
		{"no table on this system", func(netip.Addr, int) (portowner.Owner, error) { return portowner.Owner{}, portowner.ErrUnknown }, true, true, ""},
		{"not in the table", func(netip.Addr, int) (portowner.Owner, error) { return portowner.Owner{}, portowner.ErrNotFound }, false, false, "does not list"},
		{"table unreadable", func(netip.Addr, int) (portowner.Owner, error) { return portowner.Owner{}, portowner.ErrTableTooLarge }, false, false, "cannot be checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []int
			w := walker{owner: func(a netip.Addr, p int) (portowner.Owner, error) {
				if a != netip.MustParseAddr(LoopbackHost) {
					t.Errorf("asked about %v", a)
				}
				asked = append(asked, p)
				return tc.owner(a, p)
			}}
			ln, port, skipped, err := w.walk([]int{heldPort, 0})
			if ln != nil {
				defer ln.Close()
			}
			if len(asked) == 0 || asked[0] != heldPort {
				t.Fatalf("asked about %v, want %d", asked, heldPort)
			}
			if tc.walks {
				if err != nil || port == heldPort || len(skipped) != 1 || skipped[0].Unchecked != tc.unknown {
					t.Fatalf("port %d skipped %+v err %v", port, skipped, err)
				}
				if !strings.Contains(skipped[0].String(), "cannot say") {
					t.Fatalf("skipped says %q", skipped[0])
				}
				return
			}
			var he *HeldError
			if !errors.As(err, &he) || !errors.Is(err, ErrPortHeld) || he.Port != heldPort || ln != nil {
				t.Fatalf("got %v, %v; want a HeldError for %d", ln, err, heldPort)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", heldPort)) {
				t.Fatalf("refusal %q does not say %q and name the port", err, tc.want)
			}
		})
	}
}

// TestWalkStopsAtAnotherUsersPort: with the user nobody holding the first
// port of the list, the walk stops there and names the owner instead of
// silently taking the next port, which a client dialling the list in order
// would reach only after nobody's.
func TestWalkStopsAtAnotherUsersPort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owners are read from the Linux socket table")
	}
	for _, bind := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		t.Run(bind, func(t *testing.T) {
			sq := portownertest.Start(t, bind)
			ln, port, err := Listen([]int{sq.Port, 0})
			if err == nil {
				ln.Close()
				t.Fatalf("walked past nobody's port %d to %d", sq.Port, port)
			}
			var he *HeldError
			if !errors.As(err, &he) || he.Owner == nil || he.Owner.UID != sq.UID || he.Port != sq.Port {
				t.Fatalf("err = %v, want a HeldError naming uid %d", err, sq.UID)
			}
			want := fmt.Sprintf("127.0.0.1:%d is held by another user (uid %d (nobody)", sq.Port, sq.UID)
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %q, want it to say %q", err, want)
			}
			// A single port is no walk, but the refusal names the owner too.
			if _, _, err := Listen([]int{sq.Port}); !errors.Is(err, ErrPortHeld) || !strings.Contains(err.Error(), "(nobody)") {
				t.Fatalf("single port: %v", err)
			}
		})
	}
}
