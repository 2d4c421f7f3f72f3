// Package bench measures the hub the way a user runs it: it builds
// cmd/hub, starts the real binary (`hub run` on loopback ports from the
// OS, in a private HOME and XDG directories), drives it from this process
// with the load a user's agent and page make, and reads the server
// process's own CPU time, context switches and peak resident set from the
// OS before and after each measured window. The same loads run against
// lean Node implementations of the same protocol paths (bench/node) and a
// bare Go relay (bench/cmd/barerelay), started and measured the same way,
// so a table can put their costs side by side from one run.
//
// `go run ./bench/cmd/matrix` prints the whole table as Markdown; `go test
// ./bench` runs every load briefly so the harness cannot rot. Only Linux
// exposes what the harness reads (/proc); elsewhere ReadUsage returns
// errors.ErrUnsupported and the tests skip.
package bench
