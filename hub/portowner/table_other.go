//go:build !linux

package portowner

// scanTables has no socket table to read here yet. macOS (sysctl
// net.inet.tcp.pcblist_n) and Windows (GetExtendedTcpTable) each offer
// one, with owners; each is one more file beside table_linux.go.
func scanTables(func(Socket) bool) error { return ErrUnknown }

func system() source { return tableSource(scanTables) }

func findProcess(uint64) (int, string) { return 0, "" }
