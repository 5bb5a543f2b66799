package timeline

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/svgcheck"
)

// sample is a recorded start-up and teardown of the diamond: cache slow,
// app SIGKILLed on the way down.
func sample() Doc {
	r := New(diamond(), 0, t0)
	run(r, "cache", 0, 3000, false)
	run(r, "db", 0, 200, false)
	run(r, "migrate", 200, 900, true)
	run(r, "app", 3000, 3500, false)
	run(r, "web", 3001, 3100, false)
	r.TeardownBegan("received SIGTERM", 30*time.Second, at(5000))
	r.StopRequested("web", 1, "teardown", at(5000))
	r.Signalled("web", 1, syscall.SIGTERM, at(5000))
	r.Exited("web", 1, 143, false, "", at(5100))
	r.StopRequested("app", 1, "teardown", at(5100))
	r.Signalled("app", 1, syscall.SIGTERM, at(5100))
	r.Signalled("app", 1, syscall.SIGKILL, at(6100))
	r.Exited("app", 1, 137, false, "", at(6110))
	for _, n := range []string{"cache", "db"} {
		r.StopRequested(n, 1, "teardown", at(6110))
		r.Signalled(n, 1, syscall.SIGTERM, at(6110))
		r.Exited(n, 1, 143, false, "", at(6200))
	}
	r.TeardownEnded(at(6200))
	return r.Doc(at(7000))
}

// wide is a start-up of n processes in a chain of layers of ten.
func wide(n int) Doc {
	procs := make([]Proc, n)
	for i := range procs {
		procs[i] = Proc{Name: fmt.Sprintf("worker-%03d", i), Type: "service"}
		if i >= 10 {
			procs[i].DependsOn = []Dep{{Name: fmt.Sprintf("worker-%03d", i-10), Condition: "ready"}}
		}
	}
	r := New(procs, 0, t0)
	for i := range procs {
		start := (i / 10) * 100
		run(r, procs[i].Name, start, start+50+i%10*5, false)
	}
	return r.Doc(at(n/10*100 + 500))
}

func TestWriteText(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, sample(), 60); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	rows := map[string]string{}
	for _, l := range lines {
		if f := strings.Fields(strings.TrimPrefix(l, "*")); len(f) > 1 && strings.HasPrefix(f[1], "|") {
			rows[f[0]] = l
		}
	}
	for _, name := range []string{"cache", "db", "migrate", "app", "web"} {
		if rows[name] == "" {
			t.Errorf("no row for %s:\n%s", name, out)
		}
	}
	for name, crit := range map[string]bool{"cache": true, "app": true, "db": false, "migrate": false} {
		if got := strings.HasPrefix(rows[name], "*"); got != crit {
			t.Errorf("%s marked critical %v, want %v: %q", name, got, crit, rows[name])
		}
	}
	// cache is starting for 3 of 6.2 s: its row starts with a long run of '-'.
	if bar := rows["cache"][strings.Index(rows["cache"], "|")+1:]; !strings.HasPrefix(bar, strings.Repeat("-", 25)) || !strings.Contains(bar, "=") || !strings.Contains(bar, "~") {
		t.Errorf("cache bar %q: want about 29 '-', then '=' and '~'", bar)
	}
	if !strings.Contains(rows["app"], "!") {
		t.Errorf("app row lacks the SIGKILL mark: %q", rows["app"])
	}
	for _, want := range []string{"critical chain", "cache", "shutdown (received SIGTERM): 1.20s of 30.0s used", "ended by SIGKILL (SIGKILLed)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

// checkSVG fails the test unless svg is well-formed with an <svg> root, and
// returns the text of every <text> element.
func checkSVG(t *testing.T, svg []byte) []string {
	t.Helper()
	texts, err := svgcheck.Texts(svg)
	if err != nil {
		t.Fatal(err)
	}
	return texts
}

// renderPNG draws svg with rsvg-convert.
func renderPNG(t *testing.T, svg []byte) image.Image {
	t.Helper()
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("rsvg-convert is required (Debian package librsvg2-bin)")
		}
		t.Skip("rsvg-convert not installed (Debian package librsvg2-bin)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "t.svg"), filepath.Join(dir, "t.png")
	if err := os.WriteFile(in, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(bin, "-o", out, in).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v\n%s", err, msg)
	}
	img, err := svgcheck.DecodePNG(out)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestWriteSVG(t *testing.T) {
	for _, c := range []struct {
		name string
		doc  Doc
	}{{"diamond", sample()}, {"200 processes", wide(200)}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteSVG(&b, c.doc); err != nil {
				t.Fatal(err)
			}
			texts := strings.Join(checkSVG(t, b.Bytes()), "\n")
			for _, p := range c.doc.Processes {
				if !strings.Contains(texts, "\n"+p.Name+"\n") {
					t.Errorf("no label for %s", p.Name)
				}
			}
			if strings.Count(b.String(), "marker-end=") < 3 {
				t.Errorf("fewer than 3 dependency arrows")
			}
			if !strings.Contains(b.String(), `fill="#fff3c4"`) {
				t.Errorf("critical chain not highlighted")
			}
			img := renderPNG(t, b.Bytes())
			if bd := img.Bounds(); bd.Dx() < 800 || bd.Dy() < 100+10*len(c.doc.Processes) {
				t.Errorf("PNG is %dx%d, too small for %d rows", bd.Dx(), bd.Dy(), len(c.doc.Processes))
			}
			// White background, three phase colours, text, arrows.
			if n := svgcheck.Colours(img, 20); n < 6 {
				t.Errorf("PNG has %d colours: blank or nearly so", n)
			}
		})
	}
}

// Names are validated, but the chart must stay well-formed whatever it gets.
func TestWriteSVGEscapes(t *testing.T) {
	d := sample()
	d.Processes[0].Name = `a<b>&"c"`
	var b bytes.Buffer
	if err := WriteSVG(&b, d); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, b.Bytes())
}

// esc escapes as encoding/xml's EscapeText does, for every rune class.
func TestEscMatchesEncodingXML(t *testing.T) {
	for _, s := range []string{"plain", `a&b<c>d"e'f`, "tab\there", "bad\xffutf8", "\uFFFE\uFFFF\U0010FFFF", "ctl\x01\x7f", "é中😀"} {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(clean(s)))
		if got := esc(s); got != b.String() {
			t.Errorf("esc(%q) = %q, encoding/xml gives %q", s, got, b.String())
		}
	}
}
