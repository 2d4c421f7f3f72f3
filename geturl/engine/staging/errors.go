package staging

import (
	"fmt"

	"github.com/hubdev/hub/geturl/fault"
)

// Error codes of the store, part of the wire contract.
const (
	CodeChunkConflict   = "staged_chunk_conflict"
	CodeCountMismatch   = "staged_count_mismatch"
	CodeIndexOutOfRange = "staged_index_out_of_range"
	CodeChunkTooLarge   = "staged_chunk_too_large"
	CodeBlobTooLarge    = "staged_blob_too_large"
	CodeBlobNotFound    = "staged_blob_not_found"
	CodeBlobIncomplete  = "staged_blob_incomplete"
	CodeInvalidName     = "staged_blob_invalid_name"
)

func refuse(code, hint, format string, a ...any) *fault.Error {
	return &fault.Error{Code: code, Detail: fmt.Sprintf(format, a...), Hint: hint, Retryable: true, Action: fault.ActionCorrectRequest}
}
