//go:build !linux && !darwin && !windows

package portowner

// scanTables has no socket table to read on the systems without a file of
// their own (the BSDs: each offers one, with owners, for a file beside
// table_darwin.go).
func scanTables(func(Socket) bool) error { return ErrUnknown }

func system() source { return tableSource(scanTables) }

func findProcess(uint64) (int, string) { return 0, "" }
