package aiui

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Command is the `hub aiui` command group.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "aiui",
		Usage: "the aiui bridge (not implemented yet)",
		Action: func(*cli.Context) error {
			return cli.Exit(fmt.Sprintf("hub aiui: not implemented yet"), 1)
		},
	}
}
