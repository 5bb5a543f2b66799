package ui

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium with a tab, collecting every console
// error, uncaught exception and browser-side error (a CSP violation, a
// failed load) the page causes.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	allow  []string // errors the test causes on purpose (a refused action)
}

// allowError accepts browser errors containing sub: the test provokes them.
func (b *browser) allowError(sub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allow = append(b.allow, sub)
}

func newBrowser(t *testing.T, chromium string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // root in a container; the page is our own
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.ProxyServer("direct://"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b.ctx = ctx
	// The first Run starts the browser, which lives as long as ctx: no
	// timeout on this one.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) listen(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			msg = "console " + string(ev.Type) + ": " + strings.Join(parts, " ")
		}
	case *runtime.EventExceptionThrown:
		msg = "exception: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			msg = "browser " + string(ev.Entry.Level) + ": " + ev.Entry.Text + " " + ev.Entry.URL
		}
	}
	if msg != "" {
		b.mu.Lock()
		b.errors = append(b.errors, msg)
		b.mu.Unlock()
	}
}

func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, scaled(30*time.Second))
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// eval returns a JavaScript expression's value as a string; a promise is
// awaited.
func (b *browser) eval(t *testing.T, js string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, scaled(30*time.Second))
	defer cancel()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Promise.resolve(`+js+`).then(String)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("chromium: evaluate %s: %v", js, err)
	}
	return out
}

func (b *browser) waitJS(t *testing.T, timeout time.Duration, what, js string) {
	t.Helper()
	eventually(t, timeout, func() bool { return b.eval(t, js) == "true" }, func() string {
		return b.eval(t, `document.querySelector("#procs").innerText + "\n" + document.querySelector("#result").innerText`)
	}, "%s", what)
}

func (b *browser) noErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
next:
	for _, e := range b.errors {
		for _, a := range b.allow {
			if strings.Contains(e, a) {
				continue next
			}
		}
		t.Errorf("the page logged an error: %s", e)
	}
}

// cell returns the text of column i of name's row.
func cell(name string, i int) string {
	return fmt.Sprintf(`(document.querySelector('#procs tr[data-name=%q]')||{cells:[]}).cells[%d]?.textContent`, name, i)
}

// slowStop ignores SIGTERM (the disposition survives exec), so that the
// teardown lasts its stop.timeout and ends with SIGKILL: the page shows
// the shutdown report meanwhile.
const slowStop = `  slowstop:
    command: ["sh", "-c", "trap '' TERM; exec sleep 100000"]
    stop: {timeout: 4s}
`

func TestWebPage(t *testing.T) {
	tools := need(t, "chromium")
	p := start(t, "", slowStop)
	b := newBrowser(t, tools["chromium"])
	b.do(t, chromedp.Navigate("http://"+p.Addr+"/"))

	// The rows come with the page; the stream then goes live.
	b.waitJS(t, 10*time.Second, "five rows, api running and ready, the stream live",
		`document.querySelectorAll('#procs tbody tr').length === 5 && `+cell("api", 2)+` === "running" && `+cell("api", 3)+` === "yes" && `+
			`document.querySelector('#conn').textContent === "live"`)
	if got := b.eval(t, `document.querySelector('#conn').textContent`); got != "live" {
		t.Errorf("connection %q, want live", got)
	}

	// The table follows a restart made elsewhere, within a second.
	p.Operate(t, "restart", "api")
	began := time.Now()
	b.waitJS(t, time.Second, "api's restart in the table within a second", cell("api", 6)+` === "1"`)
	t.Logf("the restart showed after %v", time.Since(began).Round(time.Millisecond))
	b.waitJS(t, 5*time.Second, "api running again", cell("api", 2)+` === "running"`)

	// Sorting by restarts (descending on a second click) puts api first;
	// the filter keeps only what matches.
	b.eval(t, `document.querySelector('#procs th[data-key="restarts"]').click()`)
	b.eval(t, `document.querySelector('#procs th[data-key="restarts"]').click()`)
	b.waitJS(t, 2*time.Second, "api first by restarts", `document.querySelector('#procs tbody tr').dataset.name === "api"`)
	b.eval(t, `(document.querySelector('#filter').value = "wor", document.querySelector('#filter').dispatchEvent(new Event("input")))`)
	b.waitJS(t, 2*time.Second, "only worker", `[...document.querySelectorAll('#procs tbody tr')].map(r => r.dataset.name).join() === "worker"`)
	b.eval(t, `(document.querySelector('#filter').value = "", document.querySelector('#filter').dispatchEvent(new Event("input")), document.querySelector('#procs th[data-key="name"]').click())`)
	b.waitJS(t, 2*time.Second, "all five again, by name", `[...document.querySelectorAll('#procs tbody tr')].map(r => r.dataset.name).join() === "api,db,init,slowstop,worker"`)

	// The graph: a box per process, an arrow per dependency (init->db,
	// db->api, db->worker).
	b.waitJS(t, 5*time.Second, "the dependency graph",
		`document.querySelectorAll('#graph g[data-name]').length === 5 && document.querySelectorAll('#graph path[marker-end]').length === 3`)
	// The timeline: the SVG loaded and has a size.
	b.waitJS(t, 5*time.Second, "the timeline image",
		`document.querySelector('#timeline').complete && document.querySelector('#timeline').naturalWidth > 100`)

	// Read-only: no action buttons, output not shown, and the server
	// refuses an action even when asked directly.
	b.do(t, chromedp.Click(chromedp.CSS(`#procs tr[data-name="api"]`)))
	b.waitJS(t, 2*time.Second, "the selection pane", `!document.querySelector('#selected').hidden`)
	if got := b.eval(t, `document.querySelector('#actions').hidden && document.querySelector('#reload').hidden && !document.querySelector('#nologs').hidden`); got != "true" {
		t.Errorf("read-only page offers actions or output")
	}
	b.allowError("status of 403 (Forbidden) http://" + p.Addr + "/ui/api/restart")
	status := b.eval(t, `fetch('/ui/api/restart', {method: 'POST', headers: {'Authorization': 'Bearer 0123456789abcdef'}, body: '{"names":["api"]}'}).then(r => r.status)`)
	if status != "403" {
		t.Errorf("an action on a read-only page answered %s, want 403", status)
	}
	if got := b.eval(t, cell("api", 6)); got != "1" {
		t.Errorf("api restarts %s after the refused action, want 1", got)
	}

	// Stop db: api and worker stop first; the table shows all three.
	p.Operate(t, "stop", "db")
	b.waitJS(t, 5*time.Second, "db, api and worker stopped",
		cell("db", 2)+` === "stopped" && `+cell("api", 2)+` === "stopped" && `+cell("worker", 2)+` === "stopped"`)
	p.Operate(t, "start", "db")
	b.waitJS(t, 5*time.Second, "all running again", cell("worker", 2)+` === "running" && `+cell("api", 2)+` === "running"`)
	b.noErrors(t)

	b.screenshot(t, "ui-web.png")

	// The teardown: the page shows the shutdown report while slowstop
	// holds it up, and the other processes stopping.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	b.waitJS(t, 4*time.Second, "the shutdown report",
		`!document.querySelector('#shutdown').hidden && document.querySelector('#shutcause').textContent.includes('received terminated') && `+
			`document.querySelector('#shuttable').textContent.includes('api') && document.querySelector('#phase').textContent === 'stopping'`)
	b.noErrors(t)
	b.screenshot(t, "ui-web-shutdown.png")
}

// screenshot writes the page to $PODVISOR_UI_SCREENSHOTS/name, if set.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("PODVISOR_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, scaled(30*time.Second))
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Error(err)
	}
}

func TestWebPageActionsWithToken(t *testing.T) {
	tools := need(t, "chromium")
	const token = "s3cret-token-for-the-test-0123"
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "ui-token")
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, "ui: {actions: true, token_file: "+tokFile+", logs: true}")
	b := newBrowser(t, tools["chromium"])
	b.do(t, chromedp.Navigate("http://"+p.Addr+"/"))
	b.waitJS(t, 10*time.Second, "api running, the stream live", cell("api", 2)+` === "running" && document.querySelector('#conn').textContent === "live"`)

	// Without the token, and with a wrong one: refused, nothing done.
	b.allowError("status of 401 (Unauthorized) http://" + p.Addr + "/ui/api/restart")
	for _, auth := range []string{"", "Bearer wrong-token-0123456789"} {
		headers := `{}`
		if auth != "" {
			headers = fmt.Sprintf(`{'Authorization': %q}`, auth)
		}
		status := b.eval(t, `fetch('/ui/api/restart', {method: 'POST', headers: `+headers+`, body: '{"names":["api"]}'}).then(r => r.status)`)
		if status != "401" {
			t.Errorf("authorization %q: %s, want 401", auth, status)
		}
	}
	if got := b.eval(t, cell("api", 6)); got != "0" {
		t.Fatalf("api restarted by a refused action: restarts %s", got)
	}
	if strings.Contains(p.Out.String(), token) {
		t.Error("the token appears in podvisor's output")
	}

	// The page's restart button, confirmed, with the token typed into a
	// password field (never shown in clear).
	b.eval(t, `(window.confirm = () => true, true)`)
	b.do(t, chromedp.Click(chromedp.CSS(`#procs tr[data-name="api"]`)))
	b.waitJS(t, 2*time.Second, "the action buttons", `!document.querySelector('#actions').hidden`)
	b.waitJS(t, 5*time.Second, "api's output", `document.querySelector('#logs').textContent.includes('hello from api')`)
	b.do(t, chromedp.Click(chromedp.CSS(`#actions button[data-op="restart"]`)))
	b.waitJS(t, 2*time.Second, "a password field asking for the token",
		`document.querySelector('#tokendlg')?.open === true && document.querySelector('#token').type === 'password'`)
	b.do(t, chromedp.SendKeys(`#token`, token), chromedp.Click(chromedp.CSS(`#tokendlg button[value="ok"]`)))
	b.waitJS(t, 10*time.Second, "the outcome and the restart",
		`document.querySelector('#result').textContent.startsWith('restart api: done') && `+cell("api", 6)+` === "1"`)
	b.noErrors(t)
}

// TestWebPageOff: ui: false serves no page, and the event stream stays.
func TestWebPageOff(t *testing.T) {
	p := start(t, "ui: false")
	for path, want := range map[string]int{"/": 404, "/ui/static/app.js": 404, "/events": 200} {
		ctx, cancel := context.WithTimeout(context.Background(), scaled(5*time.Second))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.Addr+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		res.Body.Close()
		cancel()
		if res.StatusCode != want {
			t.Errorf("ui: false, GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}

// TestWebPageFirstState: the page served already shows the processes, so
// that a screenshot taken at load (chromium --headless --screenshot) is not
// just "connecting…".
func TestWebPageFirstState(t *testing.T) {
	tools := need(t, "chromium")
	p := start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), scaled(5*time.Second))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.Addr+"/", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	row := regexp.MustCompile(`<tr data-name="api"[^>]*>(<td[^>]*>[^<]*</td>){2}<td[^>]*>running</td>`)
	if !row.Match(page) || !strings.Contains(string(page), `id="phase" class="badge">running<`) {
		t.Errorf("the page served does not show the state:\n%s", page)
	}
	// What headless Chromium sees at load.
	out, err := exec.Command(tools["chromium"], "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
		"--dump-dom", "http://"+p.Addr+"/").Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if !row.Match(out) {
		t.Errorf("chromium at load sees no process table:\n%s", out)
	}
}

// TestWebPageNarrowAndGone: at 700 px the page does not scroll sideways;
// after podvisor exits the page says so, stops retrying, and shows no
// broken timeline image.
func TestWebPageNarrowAndGone(t *testing.T) {
	tools := need(t, "chromium")
	p := start(t, "")
	b := newBrowser(t, tools["chromium"])
	b.do(t, chromedp.EmulateViewport(700, 900), chromedp.Navigate("http://"+p.Addr+"/"))
	b.waitJS(t, 10*time.Second, "api running, the timeline shown",
		cell("api", 2)+` === "running" && document.querySelector('#timeline').naturalWidth > 100 && document.querySelector('#conn').textContent === "live"`)
	if got := b.eval(t, `document.documentElement.scrollWidth + " " + document.documentElement.clientWidth`); got != "700 700" {
		t.Errorf("at 700 px wide the page is %s (scroll width, width): it scrolls sideways", got)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.done
	b.waitJS(t, 15*time.Second, "the page saying podvisor is gone, no longer retrying",
		`document.querySelector('#conn').textContent.includes('podvisor is gone') && es.readyState === EventSource.CLOSED`)
	if got := b.eval(t, `(i => i.hidden || (i.complete && i.naturalWidth > 0))(document.querySelector('#timeline'))`); got != "true" {
		t.Errorf("a broken timeline image shows after podvisor exited")
	}
}
