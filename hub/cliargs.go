package hub

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// Interspersed returns c's positional arguments and applies the command's
// own flags written after them ("project add DIR --write --name x"):
// urfave/cli v2 stops parsing flags at the first positional, and people
// type flags last. A bool flag takes no value unless written --flag=value;
// every other flag takes the next argument. "--" ends flag parsing.
func Interspersed(c *cli.Context) ([]string, error) {
	args := c.Args().Slice()
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := commandFlag(c, name)
		if !strings.HasPrefix(a, "-") || a == "-" || f == nil {
			pos = append(pos, a)
			continue
		}
		if !hasValue {
			if _, isBool := f.(*cli.BoolFlag); isBool {
				value = "true"
			} else {
				if i+1 >= len(args) {
					return nil, Exit(ExitUsage, fmt.Sprintf("flag --%s needs a value", name))
				}
				i++
				value = args[i]
			}
		}
		if _, isBool := f.(*cli.BoolFlag); isBool {
			// The flag package's own word for a bad bool is "parse error".
			if _, err := strconv.ParseBool(value); err != nil {
				return nil, Exit(ExitUsage, fmt.Sprintf("flag --%s: want true or false, got %q", name, value))
			}
		}
		if err := c.Set(f.Names()[0], value); err != nil {
			return nil, Exit(ExitUsage, fmt.Sprintf("flag --%s: %v", name, err))
		}
	}
	return pos, nil
}

// commandFlag finds the command's flag called name (or an alias of it).
func commandFlag(c *cli.Context, name string) cli.Flag {
	if c.Command == nil {
		return nil
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}
