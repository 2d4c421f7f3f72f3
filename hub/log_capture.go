package hub

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// A detached hub's log holds only JSON lines, whatever wrote them. The
// logger is the only writer of the log file (RotatingFile); what bypasses
// it goes to two files of its own in the log dir, which Ingest turns into
// JSON records in the log:
//
//   - CrashFileName: the runtime's report of a fatal error, an unhandled
//     panic or a SIGQUIT dump (debug.SetCrashOutput, see CaptureCrashes);
//   - OutputFileName: the detached process's stdout and stderr (the
//     runtime writes its report there too; a child process may write).
const (
	CrashFileName  = "hub.crash"
	OutputFileName = "hub.out"
)

// Limits on what one Ingest reads: a crash report's first maxCrash bytes
// (the panic and the crashing goroutine come first; a SIGQUIT dump of
// thousands of goroutines is cut), the last maxOutput bytes of stray
// output, and maxOutputLine bytes of any line of it.
const (
	maxCrash      = 256 << 10
	maxOutput     = 256 << 10
	maxOutputLine = 4 << 10
)

// CaptureCrashes makes the runtime write its report of a crash to
// dir/CrashFileName (0600, opened through OpenPrivate) as well as to
// stderr, for the next Ingest to bring into the log.
func CaptureCrashes(dir string) error {
	f, err := OpenPrivate(filepath.Join(dir, CrashFileName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600, false)
	if err != nil {
		return err
	}
	defer f.Close() // SetCrashOutput keeps its own descriptor
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	return debug.SetCrashOutput(f, debug.CrashOptions{})
}

// Ingest writes what dir's crash and output files hold to w as JSON
// records, through a logger of its own, and empties them: one record for
// a crash report (msg "the hub crashed: <first line>", the report in
// "trace"), one for each line of other output ("stream":"output"). The
// report the runtime also wrote to stderr is not repeated. Records carry
// the time their file was last written. A file that is missing, not
// private or a link is left alone (OpenPrivate refuses it).
func Ingest(dir string, w io.Writer) error {
	crash, crashTime, cerr := drain(filepath.Join(dir, CrashFileName), maxCrash, false)
	out, outTime, oerr := drain(filepath.Join(dir, OutputFileName), maxOutput, true)
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	emit := func(t time.Time, level slog.Level, msg string, attrs ...slog.Attr) {
		r := slog.NewRecord(t, level, msg, 0)
		r.AddAttrs(attrs...)
		h.Handle(context.Background(), r)
	}
	if crash != "" {
		// The same report on stderr, from its first line on, is the
		// crash's: everything a crashing process writes after it is.
		first, _, _ := strings.Cut(crash, "\n")
		if i := strings.Index(out, first+"\n"); i >= 0 && first != "" {
			out = out[:i]
		}
	}
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) > maxOutputLine {
			line = line[:maxOutputLine] + "…"
		}
		level := slog.LevelError
		if strings.Contains(line, "warning:") {
			level = slog.LevelWarn
		}
		emit(outTime, level, line, slog.String("stream", "output"))
	}
	if crash != "" {
		first, _, _ := strings.Cut(strings.TrimLeft(crash, "\n"), "\n")
		emit(crashTime, slog.LevelError, "the hub crashed: "+first, slog.String("stream", "crash"), slog.String("trace", crash))
	}
	return errors.Join(cerr, oerr)
}

// drain reads at most limit bytes of path (its head, or when tail its
// end, from a line start) and truncates it. A missing file is empty.
func drain(path string, limit int64, tail bool) (string, time.Time, error) {
	f, err := OpenPrivate(path, os.O_RDWR, 0, false)
	if errors.Is(err, fs.ErrNotExist) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return "", time.Time{}, err
	}
	var start int64
	if tail && fi.Size() > limit {
		start = fi.Size() - limit
	}
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, start, fi.Size()-start), limit))
	if err != nil {
		return "", time.Time{}, err
	}
	if start > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:] // the first line may be cut
		}
	}
	if err := f.Truncate(0); err != nil {
		return "", time.Time{}, err
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), fi.ModTime(), nil
}
