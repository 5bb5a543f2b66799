package control

import (
	"context"

	"github.com/podvisor/podvisor/internal/supervisor"
)

// Supervised is the supervisor as a Backend: it converts the wire types to
// the supervisor's own command types and back, so the supervisor knows
// nothing of the socket and the JSON stays this package's.
type Supervised struct {
	*supervisor.Supervisor
}

var _ Backend = Supervised{}

// Command carries out op through the supervisor.
func (s Supervised) Command(ctx context.Context, op string, req Request) Response {
	return responseOf(s.Supervisor.Command(ctx, op, supervisor.Request{Names: req.Names, Signal: req.Signal, DryRun: req.DryRun}))
}

// responseOf is the wire form of a supervisor's answer.
func responseOf(r supervisor.Response) Response {
	resp := Response{OK: r.OK, Error: r.Error, Errors: r.Errors, Plan: r.Plan, Generation: r.Generation}
	for _, x := range r.Results {
		resp.Results = append(resp.Results, Result{Name: x.Name, OK: x.OK, Message: x.Message})
	}
	return resp
}
