package control

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/logs"
)

// LogBackend is what `logs` needs beyond Backend: every process's name (for
// `logs` without a name), each process's log file, and reopening the files.
// A Backend without it serves one process's tail only.
type LogBackend interface {
	// LogNames returns the names of the processes, sorted.
	LogNames() []string
	// LogFile returns the file a process's stdout goes to ("" if none) and
	// whether its lines carry a time (JSON or timestamps).
	LogFile(name string) (path string, timed bool)
	// ReopenLogs closes the log files so that the next line opens each
	// path again (after an external logrotate); it returns how many.
	ReopenLogs() int
}

// LogsQuery selects the lines `logs` prints (the API's query).
type LogsQuery = api.LogsQuery

// maxFileRead bounds how much of a log file `logs NAME` reads (its end;
// more than max_size's default, 10 MiB).
const maxFileRead = 64 << 20

// reopenLogs serves POST /v1/logs/reopen.
func (s *Server) reopenLogs(w http.ResponseWriter, r *http.Request) {
	lb, ok := s.backend.(LogBackend)
	if !ok {
		writeJSON(w, http.StatusOK, Response{Error: "this podvisor cannot reopen log files"})
		return
	}
	n := lb.ReopenLogs()
	s.log.Info("control command", "op", "logs --reopen", "files", n)
	writeJSON(w, http.StatusOK, Response{OK: true, Results: []Result{{Name: "logs", OK: true, Message: fmt.Sprintf("reopened %d log files", n)}}})
}

// parseLogsQuery reads a query, or says what is wrong with it.
func parseLogsQuery(v url.Values) (LogsQuery, *regexp.Regexp, string) {
	q := LogsQuery{Name: v.Get("name"), Tail: -1, Follow: v.Get("follow") != ""}
	if t := v.Get("tail"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return q, nil, fmt.Sprintf("bad tail %q: want a number of lines", t)
		}
		q.Tail = n
	}
	for _, b := range []struct {
		key string
		to  *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if t := v.Get(b.key); t != "" {
			at, err := time.Parse(time.RFC3339Nano, t)
			if err != nil {
				return q, nil, fmt.Sprintf("bad %s %q: want an RFC 3339 time", b.key, t)
			}
			*b.to = at
		}
	}
	var re *regexp.Regexp
	if q.Grep = v.Get("grep"); q.Grep != "" {
		var err error
		if re, err = regexp.Compile(q.Grep); err != nil {
			return q, nil, fmt.Sprintf("bad grep %q: %v", q.Grep, err)
		}
	}
	return q, re, ""
}

// filter is a query's line filter.
type filter struct {
	since, until time.Time
	re           *regexp.Regexp
}

func (f filter) timed() bool { return !f.since.IsZero() || !f.until.IsZero() }

func (f filter) keep(at time.Time, line string) bool {
	return f.inRange(at) && (f.re == nil || f.re.MatchString(line))
}

func (f filter) inRange(at time.Time) bool {
	return (f.since.IsZero() || !at.Before(f.since)) && (f.until.IsZero() || at.Before(f.until))
}

// named is a tail line with its process.
type named struct {
	name string
	logs.TailLine
}

// logs serves GET /v1/logs: one process's lines (from its file when it
// writes one, else its tail), or every process's, interleaved by time.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	q, re, msg := parseLogsQuery(r.URL.Query())
	if msg != "" {
		writeJSON(w, http.StatusBadRequest, Response{Error: msg})
		return
	}
	st, status, msg := s.openLogStream(q, filter{since: q.Since, until: q.Until, re: re})
	if msg != "" {
		writeJSON(w, status, Response{Error: msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	bw := bufio.NewWriter(w)
	if !st.writeNow(bw, q) {
		_ = bw.Flush()
		return
	}
	// A follower ends when its client goes away or the server shuts down.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.closed, cancel)()
	flusher, _ := w.(http.Flusher)
	st.follow(ctx, bw, flusher)
}

// logStream is what a logs query reads: the processes' tails and, for one
// process writing a file that can answer the query, that file.
type logStream struct {
	names []string
	tails []*logs.Tail // nil for a process that keeps no tail
	next  []uint64     // each tail's first line not yet written
	file  string
	timed bool // the file's lines carry their times
	f     filter
	width int // the width of the name column (0: one process, no names)
}

// openLogStream finds the query's processes, their tails and file. A
// message is returned, with its HTTP status, when the query cannot be
// answered.
func (s *Server) openLogStream(q LogsQuery, f filter) (st *logStream, status int, msg string) {
	st = &logStream{f: f}
	lb, _ := s.backend.(LogBackend)
	if q.Name == "" {
		if lb == nil {
			return nil, http.StatusBadRequest, "logs needs a process name here"
		}
		st.names = lb.LogNames()
		for _, n := range st.names {
			st.width = max(st.width, len(n))
		}
	} else {
		st.names = []string{q.Name}
	}
	// One process's file, when it writes one that can answer the query.
	if q.Name != "" && lb != nil {
		if st.file, st.timed = lb.LogFile(q.Name); f.timed() && !st.timed {
			st.file = "" // a text file without times: the tail answers
		}
	}
	st.tails = make([]*logs.Tail, 0, len(st.names))
	for _, n := range st.names {
		t, err := s.backend.Tail(n)
		if err != nil {
			if q.Name != "" && st.file == "" { // a known process has its file
				return nil, http.StatusNotFound, err.Error()
			}
			st.tails = append(st.tails, nil) // log.tail: 0 (or gone since LogNames)
			continue
		}
		st.tails = append(st.tails, t)
	}
	st.next = make([]uint64, len(st.tails))
	return st, 0, ""
}

// writeNow writes what is there now: the file, or the tails. It reports
// whether the query follows what comes next.
func (st *logStream) writeNow(bw *bufio.Writer, q LogsQuery) (follow bool) {
	if st.file == "" {
		var all []named
		for i, t := range st.tails {
			if t == nil {
				continue
			}
			var lines []logs.TailLine
			lines, st.next[i] = t.Last(-1)
			all = st.keep(all, st.names[i], lines)
		}
		slices.SortStableFunc(all, func(a, b named) int { return a.Time.Compare(b.Time) })
		if q.Tail >= 0 && len(all) > q.Tail {
			all = all[len(all)-q.Tail:]
		}
		writeNamed(bw, all, st.width)
		return q.Follow
	}
	if st.tails[0] != nil {
		_, st.next[0] = st.tails[0].Last(0) // follow from here
	}
	if err := writeFileLines(bw, st.file, q.Tail, st.f, st.timed); err != nil {
		fmt.Fprintf(bw, "podvisor: reading %s: %v\n", st.file, err)
	}
	if st.tails[0] == nil && q.Follow {
		fmt.Fprintf(bw, "podvisor: cannot follow %s: no output is kept in memory (log.tail is 0)\n", q.Name)
		return false
	}
	return q.Follow
}

// follow writes the tails' new lines as they come, until ctx ends or the
// client stops reading.
func (st *logStream) follow(ctx context.Context, bw *bufio.Writer, flusher http.Flusher) {
	for {
		if bw.Flush() != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		var fresh []named
		wakes := make([]<-chan struct{}, 0, len(st.tails))
		for i, t := range st.tails {
			if t == nil {
				continue
			}
			var lines []logs.TailLine
			var wake <-chan struct{}
			lines, st.next[i], wake = t.Since(st.next[i])
			wakes = append(wakes, wake)
			fresh = st.keep(fresh, st.names[i], lines)
		}
		if len(fresh) > 0 {
			slices.SortStableFunc(fresh, func(a, b named) int { return a.Time.Compare(b.Time) })
			writeNamed(bw, fresh, st.width)
			continue
		}
		if !waitAny(ctx, wakes) {
			return
		}
	}
}

// keep appends to dst the lines of process name that pass the filter.
func (st *logStream) keep(dst []named, name string, lines []logs.TailLine) []named {
	for _, l := range lines {
		if st.f.keep(l.Time, l.Line) {
			dst = append(dst, named{name, l})
		}
	}
	return dst
}

// waitAny waits until one of wakes is closed (true) or ctx ends (false).
func waitAny(ctx context.Context, wakes []<-chan struct{}) bool {
	if len(wakes) == 1 {
		select {
		case <-wakes[0]:
			return true
		case <-ctx.Done():
			return false
		}
	}
	round, cancel := context.WithCancel(ctx)
	defer cancel()
	kick := make(chan struct{}, 1) // 1-buffered, non-blocking sends: "look again"
	for _, w := range wakes {
		go func() {
			select {
			case <-w:
				select {
				case kick <- struct{}{}:
				default:
				}
			case <-round.Done():
			}
		}()
	}
	select {
	case <-kick:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeNamed writes lines, prefixed `name | ` when width > 0.
func writeNamed(w io.Writer, lines []named, width int) {
	for _, l := range lines {
		if width > 0 {
			fmt.Fprintf(w, "%-*s | %s\n", width, l.name, l.Line)
			continue
		}
		fmt.Fprintf(w, "%s\n", l.Line)
	}
}

// writeFileLines writes the lines of a log file that f keeps, the last tail
// of them if tail >= 0, streaming: at most the file's last maxFileRead
// bytes are read, and only the kept lines of a --tail are held. A timed
// file's lines are filtered by their time (JSON "time", or the text stamp
// before the first space); a line without one passes.
func writeFileLines(w io.Writer, path string, tail int, f filter, timed bool) error {
	file, err := logs.OpenLogForRead(path) // not what a process planted there
	if err != nil {
		return err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return err
	}
	partial := false
	if info.Size() > maxFileRead {
		if _, err := file.Seek(-maxFileRead, io.SeekEnd); err != nil {
			return err
		}
		partial = true // the first line read is the end of one
	}
	br := bufio.NewReaderSize(file, 64<<10)
	var ring []string // the last kept lines, for --tail
	next := 0
	for {
		line, err := br.ReadString('\n')
		if line != "" && !partial {
			if keepFileLine(line, f, timed) {
				if !strings.HasSuffix(line, "\n") {
					line += "\n"
				}
				switch {
				case tail < 0:
					if _, werr := io.WriteString(w, line); werr != nil {
						return werr
					}
				case tail == 0:
				case len(ring) < tail:
					ring = append(ring, line)
				default:
					ring[next] = line
					next = (next + 1) % tail
				}
			}
		}
		partial = false
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	for i := range ring {
		if _, err := io.WriteString(w, ring[(next+i)%len(ring)]); err != nil {
			return err
		}
	}
	return nil
}

func keepFileLine(l string, f filter, timed bool) bool {
	if f.re != nil && !f.re.MatchString(strings.TrimSuffix(l, "\n")) {
		return false
	}
	at, ok := lineTime(l, timed)
	return !ok || f.inRange(at) // a line without a time passes: nothing to judge by
}

// lineTime finds a log file line's time.
func lineTime(l string, timed bool) (time.Time, bool) {
	if !timed {
		return time.Time{}, false
	}
	if strings.HasPrefix(l, `{"time":"`) {
		rest := l[len(`{"time":"`):]
		if i := strings.IndexByte(rest, '"'); i > 0 {
			t, err := time.Parse(time.RFC3339Nano, rest[:i])
			return t, err == nil
		}
		return time.Time{}, false
	}
	stamp, _, ok := strings.Cut(l, " ")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, stamp)
	return t, err == nil
}
