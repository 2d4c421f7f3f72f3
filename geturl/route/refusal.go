package route

import (
	"github.com/hubdev/hub/geturl/fault"
	"github.com/hubdev/hub/geturl/transport"
)

// Tool-level codes more than one route's handler answers with (the
// transport's own are in package transport).
const (
	CodeUnknownPlugin     = "unknown_plugin"
	CodeUnknownTool       = "unknown_tool"
	CodeMutationsDisabled = "mutations_disabled"
)

// Fields a wrong_capability_base answer on the read base carries instead
// of a repair URL: the base to use, by its key in Init's bases ("m"), and
// the request from its route on, to append to that base.
const (
	FieldRepairBase   = "repairBase"
	FieldRepairSuffix = "repairSuffix"
)

// WrongBase refuses a request that is served on the other capability base
// than the one it arrived on. detail says why; suffix is the request from
// its route on, as written ("/x?wait=1000&raw=ls"). The session must have
// the other base (a read-only session's mutation requests are
// mutations_disabled, not this).
//
// On the mutation base the answer is the exact repair URL on the read
// base. On the read base it is never a URL: a weaker capability never
// names a stronger one, or every leaked read URL would be a terminal. The
// agent holds bases.m from Init; the answer names it by that key and
// gives the suffix to append.
func WrongBase(c *Call, detail, suffix string) *transport.Error {
	e := &transport.Error{Code: transport.CodeWrongCapabilityBase, Detail: detail, Retryable: true}
	if c.On == MutationBase {
		e.Hint = "fetch the repair URL: the same request on the read base"
		e.Action, e.Repair = fault.ActionFetchRepair, c.Bases.Read+suffix
		return e
	}
	e.Hint = "fetch bases.m from Init + repairSuffix; a read URL never names the mutation base"
	e.Action = fault.ActionCorrectRequest
	return e.With(FieldRepairBase, "m").With(FieldRepairSuffix, suffix)
}
