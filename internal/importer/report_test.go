package importer

import (
	"strings"
	"testing"
)

// TestReportStdoutRotation: the rotation keys of a stream printed on
// podvisor's stdout are reported too (every directive ends in the report).
func TestReportStdoutRotation(t *testing.T) {
	sv := "[program:web]\ncommand=/usr/bin/web\nstdout_logfile=/dev/stdout\nstdout_logfile_maxbytes=0\n" +
		"stderr_logfile=/dev/stderr\nstderr_logfile_maxbytes=0\nstderr_logfile_backups=3\n"
	_, r, err := ConvertSupervisord(Source{Path: "s.conf", Data: []byte(sv)}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	report := reportText(r)
	for _, want := range []string{
		"s.conf:4: [program:web] stdout_logfile_maxbytes=0 (podvisor's stdout is not rotated)",
		"s.conf:6: [program:web] stderr_logfile_maxbytes=0 (podvisor's stdout is not rotated)",
		"s.conf:7: [program:web] stderr_logfile_backups: podvisor's stdout is not rotated",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// TestReportMessages pins report lines a newcomer found wrong (issue 35):
// each key at its own line, podvisor's messages on stdout, log_level's own
// message, a numprocs copy's approximation once, shutdown.command approximated.
func TestReportMessages(t *testing.T) {
	sv := "[supervisord]\nlogfile=/var/log/supervisord.log\n\n" +
		"[program:web]\ncommand=/usr/bin/web\nnumprocs=2\nprocess_name=%(program_name)s_%(process_num)d\n" +
		"autorestart=true\nstartretries=3\nstdout_logfile=/var/log/web.log\nstdout_logfile_maxbytes=0\n" +
		"\n[program:off]\ncommand=/usr/bin/off\nautorestart=false\n"
	_, r, err := ConvertSupervisord(Source{Path: "s.conf", Data: []byte(sv)}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	svReport := reportText(r)
	pc := "version: \"0.5\"\nlog_level: debug\nprocesses:\n  web:\n    command: sleep 1\n    shutdown:\n      command: echo bye\n"
	_, r, err = ConvertProcessCompose(Source{Path: "pc.yaml", Data: []byte(pc)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pcReport := reportText(r)
	for _, tc := range []struct {
		report, want, not string
	}{
		{svReport, "s.conf:8: [program:web] autorestart=true", "s.conf:4: [program:web] autorestart"},
		{svReport, "s.conf:15: [program:off] restart: autorestart=false", "s.conf:13: "},
		{svReport, "logfile: podvisor prints its own messages on its stdout", "on stderr"},
		{svReport, "s.conf:11: [program:web] log: stdout_logfile_maxbytes=0", "web_1.log: stdout_logfile_maxbytes"},
		{svReport, "s.conf:9: [program:web] restart: startretries=3", "web_1.restart: startretries"},
		{pcReport, "pc.yaml:2: log_level: podvisor's own messages", "log_level: one log for every process"},
		{pcReport, "pc.yaml:7: web.stop: shutdown.command: podvisor runs it, then sends the stop signal", "web.shutdown.command\n"},
	} {
		if !strings.Contains(tc.report, tc.want) {
			t.Errorf("report lacks %q:\n%s", tc.want, tc.report)
		}
		if strings.Contains(tc.report, tc.not) {
			t.Errorf("report has %q:\n%s", tc.not, tc.report)
		}
	}
}
