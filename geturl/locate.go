package geturl

import (
	"github.com/hubdev/hub/geturl/control"
	"github.com/hubdev/hub/hub"
)

// Client drives a running geturl control plane (package control's).
type Client = control.Client

// Locate finds the running control plane through its control file; no
// file, or one whose control plane does not answer, is exit 3 with what
// to run (control.Locate).
func Locate(d hub.Dirs) (*Client, error) { return control.Locate(d) }
