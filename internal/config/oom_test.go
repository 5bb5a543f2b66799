package config

import "testing"

func TestOOMScoreAdj(t *testing.T) {
	cfg := mustParse(t, "processes:\n  batch: {command: x, oom_score_adj: 1000}\n  proxy: {command: x, oom_score_adj: -500}\n  app: {command: x}\n", nil)
	if p := cfg.Processes["batch"].OOMScoreAdj; p == nil || *p != 1000 {
		t.Errorf("batch oom_score_adj = %v, want 1000", p)
	}
	if p := cfg.Processes["proxy"].OOMScoreAdj; p == nil || *p != -500 {
		t.Errorf("proxy oom_score_adj = %v, want -500", p)
	}
	if p := cfg.Processes["app"].OOMScoreAdj; p != nil {
		t.Errorf("app oom_score_adj = %d, want unset", *p)
	}
	runErrCases(t, []errCase{
		{name: "above 1000", src: "processes:\n  a: {command: x, oom_score_adj: 1001}\n",
			pos: "procs.yaml:2:34", path: "processes.a.oom_score_adj", msg: "oom_score_adj 1001 is out of range -1000..1000", hint: "first choice"},
		{name: "below -1000", src: "processes:\n  a: {command: x, oom_score_adj: -1001}\n",
			pos: "procs.yaml:2:34", path: "processes.a.oom_score_adj", msg: "out of range -1000..1000"},
		{name: "a string", src: "processes:\n  a: {command: x, oom_score_adj: high}\n",
			pos: "procs.yaml:2:34", path: "processes.a.oom_score_adj", msg: "expected a whole number, got a string"},
	})
}
