package hub

// renameOverOpen: Go opens files on Windows without FILE_SHARE_DELETE, so
// an open log cannot be renamed or replaced; it is closed first
// (rotateClosed).
const renameOverOpen = false
