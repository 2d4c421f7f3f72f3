package control

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"
)

// companionCommand is `hub geturl companion`: the operator's side of the
// browser companion (the extension asks to pair; the operator decides).
func companionCommand() *cli.Command {
	return &cli.Command{
		Name:  "companion",
		Usage: "the browser companion: approve or refuse the extension's pairing requests, list and revoke paired devices",
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list pairing requests (with the code the extension shows) and paired devices with their live bindings",
				Flags: []cli.Flag{jsonFlag}, Action: companionList},
			companionOpCommand("approve", "REQUEST", "pair the device of a pending request (check that its code is the one the extension shows)"),
			companionOpCommand("refuse", "REQUEST", "refuse a pending pairing request"),
			companionOpCommand("revoke", "DEVICE", "unpair a device: every session it bound ends at once"),
			companionExportCommand(),
		},
	}
}

// companionOverview is GET /api/companion's companion, as the CLI reads it.
type companionOverview struct {
	Pending []struct {
		Request string    `json:"request"`
		Device  string    `json:"device"`
		Name    string    `json:"name"`
		Code    string    `json:"code"`
		Created time.Time `json:"created"`
		Expires time.Time `json:"expires"`
	} `json:"pending"`
	Devices []struct {
		ID       string    `json:"id"`
		Name     string    `json:"name"`
		Paired   time.Time `json:"paired"`
		LastSeen time.Time `json:"lastSeen"`
		Bindings []struct {
			ID           string    `json:"id"`
			Project      string    `json:"project"`
			Session      string    `json:"session"`
			Conversation string    `json:"conversation"`
			Created      time.Time `json:"created"`
		} `json:"bindings"`
	} `json:"devices"`
	LeaseMS     int64  `json:"leaseMs"`
	Unavailable string `json:"unavailable,omitempty"`
}

func companionList(c *cli.Context) error {
	if _, err := args(c, 0, "companion list [--json]"); err != nil {
		return err
	}
	cl, err := client()
	if err != nil {
		return err
	}
	var ans struct {
		Companion companionOverview `json:"companion"`
	}
	if err := cl.Do(c.Context, http.MethodGet, "/api/companion", nil, &ans); err != nil {
		return refusal(err)
	}
	ov := ans.Companion
	if c.Bool("json") {
		emitJSON(c.App.Writer, ov)
		return nil
	}
	w := c.App.Writer
	if ov.Unavailable != "" {
		fmt.Fprintf(c.App.ErrWriter, "no device is trusted: %s\n", ov.Unavailable)
	}
	if len(ov.Pending) == 0 && len(ov.Devices) == 0 {
		fmt.Fprintln(c.App.ErrWriter, "no pairing requests and no paired devices; pair from the extension's popup")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(ov.Pending) > 0 {
		fmt.Fprintln(tw, "PENDING REQUEST\tCODE\tASKED\tDEVICE NAME")
		for _, p := range ov.Pending {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Request, p.Code, p.Created.Local().Format(time.DateTime), oneLine(p.Name))
		}
		fmt.Fprintln(tw)
	}
	if len(ov.Devices) > 0 {
		fmt.Fprintln(tw, "DEVICE\tPAIRED\tLAST SEEN\tBINDINGS\tNAME")
		for _, d := range ov.Devices {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", d.ID, d.Paired.Local().Format(time.DateTime), d.LastSeen.Local().Format(time.DateTime), len(d.Bindings), oneLine(d.Name))
			for _, b := range d.Bindings {
				fmt.Fprintf(tw, "  %s\tproject %s\tsession %s\t\t%s\n", b.ID, b.Project, b.Session, b.Conversation)
			}
		}
	}
	return tw.Flush()
}

// oneLine keeps a requester-chosen name on its line of the table.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

func companionOpCommand(op, arg, usage string) *cli.Command {
	return &cli.Command{Name: op, Usage: usage, ArgsUsage: arg, Flags: []cli.Flag{jsonFlag}, Action: func(c *cli.Context) error {
		pos, err := args(c, 1, "companion "+op+" "+arg)
		if err != nil {
			return err
		}
		cl, err := client()
		if err != nil {
			return err
		}
		if err := cl.Do(c.Context, http.MethodPost, "/api/companion/"+op+"/"+url.PathEscape(pos[0]), nil, nil); err != nil {
			return refusal(err)
		}
		if c.Bool("json") {
			emitJSON(c.App.Writer, map[string]any{"id": pos[0], "done": op})
			return nil
		}
		switch op {
		case "approve":
			fmt.Fprintf(c.App.Writer, "request %s approved: the device is paired\n", pos[0])
		case "refuse":
			fmt.Fprintf(c.App.Writer, "request %s refused\n", pos[0])
		case "revoke":
			fmt.Fprintf(c.App.Writer, "device %s revoked; its sessions ended\n", pos[0])
		}
		return nil
	}}
}
