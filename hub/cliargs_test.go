package hub

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		pos      []string
		name     string
		write    bool
		terminal bool
		fail     bool
		msg      string
	}{
		{args: []string{"dir"}, pos: []string{"dir"}},
		{args: []string{"--name", "x", "dir"}, pos: []string{"dir"}, name: "x"},
		{args: []string{"dir", "--write", "--name", "x"}, pos: []string{"dir"}, name: "x", write: true},
		{args: []string{"dir", "--name=x", "--terminal=true", "--write=false"}, pos: []string{"dir"}, name: "x", terminal: true},
		{args: []string{"dir", "-n", "y"}, pos: []string{"dir"}, name: "y"},
		{args: []string{"dir", "--", "--write"}, pos: []string{"dir", "--write"}},
		{args: []string{"dir", "--unknown"}, pos: []string{"dir", "--unknown"}},
		{args: []string{"dir", "--name"}, fail: true},
		{args: []string{"dir", "--write=maybe"}, fail: true, msg: `flag --write: want true or false, got "maybe"`},
	} {
		var got []string
		var err error
		var name string
		var write, terminal bool
		app := &cli.App{
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "name", Aliases: []string{"n"}},
				&cli.BoolFlag{Name: "write"},
				&cli.BoolFlag{Name: "terminal"},
			},
			Action: func(c *cli.Context) error {
				got, err = Interspersed(c)
				name, write, terminal = c.String("name"), c.Bool("write"), c.Bool("terminal")
				return nil
			},
		}
		app.Run(append([]string{"x"}, tc.args...))
		if tc.fail {
			if err == nil {
				t.Errorf("%q: no error", tc.args)
			} else if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("%q: error %q, want %q", tc.args, err, tc.msg)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.pos) || name != tc.name || write != tc.write || terminal != tc.terminal {
			t.Errorf("%q: pos %q name %q write %v terminal %v err %v", tc.args, got, name, write, terminal, err)
		}
	}
}
