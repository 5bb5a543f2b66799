package importer

import "testing"

// TestGoldenProcessComposeKeys converts a file with the process-compose
// settings that have a podvisor counterpart (is_tty, schedule, num_port)
// and those that do not, each dropped with its own reason.
func TestGoldenProcessComposeKeys(t *testing.T) {
	m, r, err := ConvertProcessCompose(readSource(t, "testdata/process-compose-keys/process-compose.yaml"), Options{})
	convertedGolden(t, "process-compose-keys", m, r, err)
	for _, e := range r.Entries {
		if e.Kind == Dropped && (e.Detail == "no podvisor equivalent" || e.Detail == "") {
			t.Errorf("%s dropped without a reason of its own", e.What)
		}
	}
}

// TestGoldenProcessComposeMore converts what issue 37 found refused in real
// files, as process-compose runs it: {{or "${VAR}" .VAR}} (podvisor's
// ${VAR:-value}), a process without command (its shell with no
// arguments: exits 0), a disabled process (profiles: [disabled]), and
// disable_env_expansion (every $ is text).
func TestGoldenProcessComposeMore(t *testing.T) {
	for _, name := range []string{"process-compose", "literal"} {
		t.Run(name, func(t *testing.T) {
			m, r, err := ConvertProcessCompose(readSource(t, "testdata/process-compose-more/"+name+".yaml"), Options{})
			convertedGolden(t, "process-compose-more-"+name, m, r, err)
		})
	}
}

// TestGoldenProcessComposeExternalDeps converts a file whose depends_on
// names processes from elsewhere (issue 37): devbox's postgresql plugin,
// another -f file. Each is left out and said in the file's header and the
// report with where it may come from; the known dependency stays; a
// process whose every dependency is unknown still converts.
func TestGoldenProcessComposeExternalDeps(t *testing.T) {
	m, r, err := ConvertProcessCompose(readSource(t, "testdata/process-compose-extdeps/process-compose.yaml"), Options{})
	convertedGolden(t, "process-compose-extdeps", m, r, err)
}
