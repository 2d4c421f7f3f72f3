package geturl

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/hubdev/hub/adapters"
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/geturl/mutation"
	"github.com/hubdev/hub/geturl/session"
	"github.com/hubdev/hub/hub"
)

// Command is the `hub geturl` command group: the control plane's commands
// (package control) and serve, which runs this adapter in the foreground
// beside the hub env describes.
func Command(env adapters.CommandEnv) *cli.Command { return control.Command(serveCommand(env)) }

func serveCommand(env adapters.CommandEnv) *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "run the geturl bridge in the foreground: the data plane and the control plane on 127.0.0.1",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Value: DefaultPort, Usage: "data-plane `PORT` (the one a tunnel exposes)"},
			&cli.IntFlag{Name: "control-port", Value: DefaultControlPort, Usage: "operator control-plane `PORT` (never tunneled)"},
			&cli.StringFlag{Name: "public-origin", Usage: "the https `ORIGIN` a tunnel exposes the data plane at (default $" + PublicOriginEnv + ")"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "stderr log level: debug, info, warn or error"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return hub.Exit(hub.ExitUsage, "hub geturl serve: unexpected arguments")
			}
			cfg := NewConfig()
			cfg.Port, cfg.ControlPort, cfg.PublicOrigin = c.Int("port"), c.Int("control-port"), c.String("public-origin")
			if err := cfg.Validate(); err != nil {
				return hub.Exit(hub.ExitUsage, "hub geturl serve: "+err.Error())
			}
			log, err := hub.NewLogger(c.App.ErrWriter, hub.LogOptions{Level: c.String("log-level")})
			if err != nil {
				return hub.Exit(hub.ExitUsage, "hub geturl serve: --log-level "+err.Error())
			}
			limit, from := hub.SetMemoryLimit()
			log.Debug("soft memory limit", "bytes", limit, "from", from)
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The bridges of a hub running beside it are its /k plugins,
			// reached through their control planes.
			view := env.HubView()
			if err := (adapters.Standalone{Name: "geturl", Adapter: New(cfg), Log: log, Hub: view}).Serve(ctx); err != nil {
				return hub.Exit(hub.ExitFailed, "hub geturl serve: "+err.Error())
			}
			return nil
		},
	}
}

// noteChange is the mutation host's Changed: the control page's activity
// list shows which files each successful mutation changed.
func (s *Server) noteChange(c mutation.Change) {
	s.activity.Changed(sessionID(c.Session), c.Call, c.Paths)
}

// sessionID is the session a request's session generation belongs to, ""
// for anything else.
func sessionID(sess any) string {
	if g, ok := sess.(*session.Generation); ok {
		return g.SessionID()
	}
	return ""
}
