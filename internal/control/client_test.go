package control

import (
	"context"
	"io"
	"time"

	"github.com/podvisor/podvisor/client"
)

// testClient gives the tests short call shapes over the public client
// (package client), the one podvisor's command line uses.
type testClient struct{ *client.Client }

func newTestClient(path string) testClient {
	c, err := client.New(client.Options{Socket: path})
	if err != nil {
		panic(err) // a path is given: cannot fail
	}
	return testClient{c}
}

func (c testClient) Do(ctx context.Context, op string, req Request, wait time.Duration) (Response, error) {
	return c.CommandWait(ctx, op, req, wait)
}

func (c testClient) Logs(ctx context.Context, w io.Writer, name string, tail int, follow bool) error {
	return c.Client.Logs(ctx, w, LogsQuery{Name: name, Tail: tail, Follow: follow})
}

func (c testClient) LogsWith(ctx context.Context, w io.Writer, q LogsQuery) error {
	return c.Client.Logs(ctx, w, q)
}
