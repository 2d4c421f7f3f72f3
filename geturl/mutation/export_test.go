package mutation

import (
	"github.com/hubdev/hub/geturl/engine/filechange"
	"github.com/hubdev/hub/geturl/engine/terminal"
)

// What the external tests hold of a Host: the project gate its file
// mutations queue behind, and its terminal.

func (h *Host) ProjectGate() *filechange.Gate { return h.gate }

func (h *Host) TerminalManager() *terminal.Manager { return h.terminalManager() }
