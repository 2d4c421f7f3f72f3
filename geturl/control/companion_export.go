package control

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/geturl/companion/extension"
	"github.com/hubdev/hub/hub"
)

// companionExportCommand writes the embedded extension for a browser's
// "Load unpacked". It needs no running hub: the files are in the binary.
func companionExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write the companion extension into DIR (new, empty, or a previous export) for the browser's \"Load unpacked\"",
		ArgsUsage: "DIR",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			pos, err := args(c, 1, "companion export DIR")
			if err != nil {
				return err
			}
			dir, err := filepath.Abs(pos[0])
			if err != nil {
				return hub.Exit(hub.ExitFailed, "hub geturl companion export: "+err.Error())
			}
			if err := extension.Export(dir); err != nil {
				return hub.Exit(hub.ExitFailed, "hub geturl companion export: "+err.Error())
			}
			if c.Bool("json") {
				emitJSON(c.App.Writer, map[string]any{"dir": dir, "files": extension.Names()})
				return nil
			}
			fmt.Fprintf(c.App.Writer, "wrote the geturl companion to %s\n", dir)
			fmt.Fprintf(c.App.ErrWriter, "load it in Chromium or Chrome: chrome://extensions, turn on Developer mode, \"Load unpacked\", choose %s;\n"+
				"then pair it from its toolbar button and approve it on the control page (hub geturl open --browser)\n", dir)
			return nil
		},
	}
}
