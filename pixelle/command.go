package pixelle

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Command is the `hub pixelle` command group.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "pixelle",
		Usage: "the pixelle bridge (not implemented yet)",
		Action: func(*cli.Context) error {
			return cli.Exit(fmt.Sprintf("hub pixelle: not implemented yet"), 1)
		},
	}
}
