package autostart

import (
	"encoding/json"
	"os"
	"testing"
)

// argvDumpEnv, when set, makes the test binary a program that only writes
// its os.Args (JSON) to the file it names: the Windows tests start it
// from a Run command line to see what a hub.exe would be given.
const argvDumpEnv = "HUB_AUTOSTART_TEST_ARGV_TO"

func TestMain(m *testing.M) {
	if out := os.Getenv(argvDumpEnv); out != "" {
		b, _ := json.Marshal(os.Args)
		if err := os.WriteFile(out, b, 0o600); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
