package mutation

import (
	"github.com/hubdev/hub/geturl/mutate"
	"github.com/hubdev/hub/geturl/terminal"
)

// What the external tests hold of a Host: the project gate its file
// mutations queue behind, and its terminal.

func (h *Host) ProjectGate() *mutate.Gate { return h.gate }

func (h *Host) TerminalManager() *terminal.Manager { return h.terminalManager() }
