// Package portowner says who holds a loopback TCP port: the uid the
// kernel's socket table gives the socket, and the process holding it when
// this process may see it.
//
// Another local user can bind a loopback port before us and serve whatever
// dials it. Two questions follow, and this package answers both from one
// reading of the socket table: who holds a port we could not bind
// (Listener), and who holds the far end of a connection we just dialled
// (Peer), which names the process that will read what we write, with no
// window between the check and the connection.
//
// Dialer puts Peer in front of every client that sends a credential to a
// loopback port a file or flag named (the hub's control key, the bridges'
// keys, Pixelle's agent token): it hands back a connection only once its
// far end is this user's, so a port another user took gets a refusal
// naming them, not the credential. Where no owner can be known on this
// system (ErrUnknown) it lets the connection through unless Strict; see
// its doc for why.
//
// The OS seam is two functions per platform, in their own files: system
// (the source of answers: the listeners on a port, and one connection)
// and findProcess (the pid and command holding a socket inode). On Linux
// (table_linux.go) the answers come from the kernel's sock_diag netlink
// protocol (netlink_linux.go), which looks the very socket up, and from
// /proc/net/tcp and /proc/net/tcp6 where that cannot answer (a kernel or
// sandbox without it); /proc/<pid>/fd names the process. On macOS
// (table_darwin.go) sysctl net.inet.tcp.pcblist_n gives every socket with
// its owner's uid (pcblist.go); on Windows (table_windows.go)
// GetExtendedTcpTable gives each socket's pid, whose token's user is
// compared with ours (mibtable.go); on both a socket's Inode is a pid.
// table_other.go answers ErrUnknown, so callers decide what an unknown
// owner means for them. The parsers and the matching are portable and
// tested everywhere.
package portowner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
	"unicode"
)

var (
	// ErrUnknown means this system offers no socket table we can read,
	// so no owner can be known.
	ErrUnknown = errors.New("the owner of a socket cannot be read on this system")
	// ErrNotFound means the table was read and holds no such socket.
	ErrNotFound = errors.New("no such socket in the socket table")
	// ErrNotAccepted means the far end of a connection is not accepted
	// yet and no listener it could be waiting on was found: the one that
	// held it closed, which resets the connections it had not accepted.
	ErrNotAccepted = errors.New("the server side of the connection is not accepted yet and no listener holds it, so its owner is unknown")
	// ErrAmbiguous means the far end of a connection is not accepted yet
	// and the listeners that could hold it are not all one user's (or
	// not the user the socket table gives the connection itself), so
	// which of them will accept it is unknown.
	ErrAmbiguous = errors.New("the server side of the connection is not accepted yet and listeners of more than one user could hold it, so its owner is unknown")
)

// Owner is who holds a socket.
type Owner struct {
	// UID owns the socket (see Socket.UID).
	UID int
	// Inode is the socket's inode, 0 when no process holds it. For the
	// server side of a connection not accepted yet (see Peer) it is its
	// listener's, so Resolve names the process that will accept it.
	Inode uint64
	// User is UID's login name, PID and Command the process holding the
	// socket: set by Resolve, when known and visible to this process.
	User    string
	PID     int
	Command string
}

// Mine reports whether the socket belongs to this process's user.
func (o Owner) Mine() bool { return o.UID == os.Getuid() }

// String names the owner for a message: "uid 65534 (nobody)",
// "uid 65534 (nobody), pid 1234 (python3)", "pid 1234 (node), yours".
func (o Owner) String() string {
	proc := ""
	if o.PID > 0 {
		proc = "pid " + strconv.Itoa(o.PID)
		if o.Command != "" {
			proc += " (" + o.Command + ")"
		}
	}
	uid := "uid " + strconv.Itoa(o.UID)
	if o.User != "" {
		uid += " (" + o.User + ")"
	}
	switch {
	case o.Mine() && proc != "":
		return proc + ", yours"
	case o.Mine():
		return uid + ", yours"
	case proc != "":
		return uid + ", " + proc
	}
	return uid
}

// Resolve fills in o's user name and, when this process may see it, the
// process holding the socket. It reads the user database and scans every
// process's descriptors: it is for messages, not for hot paths.
func Resolve(o Owner) Owner {
	if u, err := user.LookupId(strconv.Itoa(o.UID)); err == nil {
		o.User = u.Username
	}
	if o.Inode != 0 {
		o.PID, o.Command = findProcess(o.Inode)
	}
	return o
}

// Listener returns the owner of the socket listening on port at addr, or
// at a wildcard address that overlaps it (0.0.0.0 or :: for 127.0.0.1, ::
// for ::1): the sockets that refuse our bind, or answer our dial, of
// addr:port. An invalid (zero) addr matches any address. When several
// sockets match, another user's is returned first. The result is not
// resolved (see Resolve).
func Listener(addr netip.Addr, port int) (Owner, error) {
	return listener(system(), addr, port)
}

// Peer returns the owner of the server side of the TCP connection c: the
// socket whose local address is c's remote one and whose remote address
// is c's local one. That is the socket the bytes written on c reach, so
// checking it leaves no window between the check and the connection.
// The result is not resolved (see Resolve).
//
// A server side not accepted yet (waiting in its listener's accept queue,
// or a request socket: the handshake not complete, or held back by
// TCP_DEFER_ACCEPT until data comes) has no process, so no inode, and
// the table may give it uid 0 (sock_diag for a request socket; both
// tables for an established one on kernels without sk_uid, and on any
// kernel when its listener is root's), which cannot be told from root's
// own socket. Its owner is then its listener's: the listening socket on
// its port whose address is its local address or a wildcard that takes
// it (0.0.0.0, or :: unless IPV6_V6ONLY), bound to the device it is
// bound to (SO_BINDTODEVICE: the kernel copies the listener's into its
// connections). Peer answers at once, without waiting for an accept,
// which a busy server may take seconds to make. That is sound:
//
//   - A connection in a listener's accept queue is handed only to an
//     accept on that listener (or, with net.ipv4.tcp_migrate_req, to
//     another listener of its SO_REUSEPORT group, so of the same uid).
//     When the listener closes, the connections still in its queue are
//     reset, so bytes we write cannot reach a listener another user
//     binds to the port later.
//   - Linux lets two listeners share a port only where their addresses
//     do not overlap, where each is bound to a different device, or
//     where both set SO_REUSEPORT, which it allows only within one uid.
//     So the listeners that can hold a connection are all one user's.
//     Where a table lists several of different users (/proc's, which
//     shows neither devices nor IPV6_V6ONLY, so every listener that
//     might match counts), Peer does not pick one: ErrAmbiguous.
//   - The listeners are read after the connection. Where the listener
//     closed in between (resetting the connection) and none is left,
//     the answer is ErrNotAccepted; where the table gives the connection
//     a uid of its own (its listener's: /proc for a request socket, a
//     kernel with sk_uid for an established one) that is not the
//     listener's found, ErrAmbiguous.
//
// ctx is not waited on, as nothing is waited for; an ended ctx is its
// error.
func Peer(ctx context.Context, c net.Conn) (Owner, error) {
	la, lok := c.LocalAddr().(*net.TCPAddr)
	ra, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return Owner{}, fmt.Errorf("not a TCP connection: %T", c)
	}
	if err := ctx.Err(); err != nil {
		return Owner{}, err
	}
	return peer(system(), unmapped(la.AddrPort()), unmapped(ra.AddrPort()))
}

// source answers this package's two questions from one of the system's
// socket tables.
type source interface {
	// listeners calls visit for every listening socket on port, and
	// maybe for other sockets, which callers skip, until visit returns
	// false.
	listeners(port uint16, visit func(Socket) bool) error
	// conn returns the socket in state StateEstablished or StateSynRecv
	// whose own address is local and whose peer is remote; found is
	// false when the table holds none. A socket not accepted yet has no
	// Inode, and whatever UID the table writes for it (see Peer).
	conn(local, remote netip.AddrPort) (s Socket, found bool, err error)
}

// scanner calls visit for every row of the system's TCP socket tables
// until visit returns false (scanTables, or a recorded table in tests).
type scanner func(visit func(Socket) bool) error

// fallback answers from first, and from then where first fails: the
// kernel's table is the same behind both, so any answer of either is
// the truth, and one that cannot answer leaves it to the other.
type fallback struct{ first, then source }

func (f fallback) listeners(port uint16, visit func(Socket) bool) error {
	// first visits nothing unless it answers in full (see source).
	if err := f.first.listeners(port, visit); err == nil {
		return nil
	}
	return f.then.listeners(port, visit)
}

func (f fallback) conn(local, remote netip.AddrPort) (Socket, bool, error) {
	if s, found, err := f.first.conn(local, remote); err == nil {
		return s, found, nil
	}
	return f.then.conn(local, remote)
}

func listener(src source, addr netip.Addr, port int) (Owner, error) {
	if port < 0 || port > 65535 {
		return Owner{}, ErrNotFound
	}
	addr = addr.Unmap()
	var found []Owner
	err := src.listeners(uint16(port), func(s Socket) bool {
		if s.State == StateListen && int(s.Local.Port()) == port && overlaps(s, addr) {
			found = append(found, Owner{UID: s.UID, Inode: s.Inode})
		}
		return true
	})
	if err != nil {
		return Owner{}, err
	}
	if len(found) == 0 {
		return Owner{}, ErrNotFound
	}
	for _, o := range found {
		if !o.Mine() {
			return o, nil
		}
	}
	return found[0], nil
}

// overlaps reports whether the listener s conflicts with addr (see
// Listener).
func overlaps(s Socket, addr netip.Addr) bool {
	local := s.Local.Addr()
	switch {
	case !addr.IsValid() || local == addr:
		return true
	case local == netip.IPv6Unspecified():
		// A dual-stack wildcard takes IPv4 too, unless IPV6_V6ONLY,
		// which only sock_diag shows.
		return addr.Is6() || !s.V6Only
	case local == netip.IPv4Unspecified():
		return addr.Is4()
	}
	return false
}

func peer(src source, local, remote netip.AddrPort) (Owner, error) {
	s, found, err := src.conn(remote, local)
	switch {
	case err != nil:
		return Owner{}, err
	case !found:
		return Owner{}, ErrNotFound
	case s.Inode != 0:
		// Accepted: the socket of whoever accepted it, with their uid.
		return Owner{UID: s.UID, Inode: s.Inode}, nil
	}
	return queued(src, s)
}

// queued returns the owner of s, the server side of a connection not
// accepted yet: its listener's (see Peer for why that is sound).
func queued(src source, s Socket) (Owner, error) {
	var o Owner
	n, mixed := 0, false
	err := src.listeners(s.Local.Port(), func(l Socket) bool {
		if l.State != StateListen || l.Local.Port() != s.Local.Port() || !overlaps(l, s.Local.Addr()) || !sameDevice(l, s) {
			return true
		}
		if n == 0 {
			o = Owner{UID: l.UID, Inode: l.Inode}
		} else if l.UID != o.UID {
			mixed = true
		}
		n++
		return true
	})
	switch {
	case err != nil:
		return Owner{}, err
	case n == 0:
		return Owner{}, ErrNotAccepted
	case mixed, s.UID != 0 && s.UID != o.UID:
		return Owner{}, ErrAmbiguous
	}
	return o, nil
}

// sameDevice reports whether the listener l may hold the connection s:
// the kernel gives a connection its listener's device binding, so one
// bound to another device never held it. A table that cannot say
// (DeviceUnknown) matches any.
func sameDevice(l, s Socket) bool {
	return l.Device == DeviceUnknown || s.Device == DeviceUnknown || l.Device == s.Device
}

// printable keeps a process name fit for a message: whoever started the
// process chose it. The kernel keeps at most 15 bytes of it.
func printable(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

func unmapped(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
}
