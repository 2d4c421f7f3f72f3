package route

import "github.com/hubdev/hub/geturl/engine/files"

// Coverage receives what each /r returned (per file: its fingerprint and
// the lines shown), so the mutation kernel can require complete current
// read coverage before a whole-file overwrite. *files.Ledger implements it;
// a nil Coverage records nothing.
type Coverage interface {
	Record(files.Result)
}

var _ Coverage = (*files.Ledger)(nil)
