package stitchslop

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Command is the `hub stitchslop` command group.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "stitchslop",
		Usage: "the stitchslop bridge (not implemented yet)",
		Action: func(*cli.Context) error {
			return cli.Exit(fmt.Sprintf("hub stitchslop: not implemented yet"), 1)
		},
	}
}
