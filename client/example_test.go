package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/podvisor/podvisor/client"
	"github.com/podvisor/podvisor/internal/server"
)

// TestMain serves a podvisor's HTTP port for Example, at $PODVISOR_ADDR
// (where podvisor's command line looks too).
func TestMain(m *testing.M) {
	src := newSource(snapshot())
	srv := httptest.NewServer(server.New(src, server.NewMetrics(), server.Options{}))
	os.Setenv("PODVISOR_ADDR", srv.Listener.Addr().String())
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// Print each process of the podvisor at $PODVISOR_ADDR with its state.
// Operate verbs and logs go through the control socket: add
// Options{Socket: "/run/podvisor.sock"} and call c.Restart(ctx, "web").
func Example() {
	c, err := client.New(client.Options{Addr: os.Getenv("PODVISOR_ADDR")})
	if err != nil {
		log.Fatal(err)
	}
	st, err := c.Status(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range st.Processes {
		fmt.Printf("%s %s\n", p.Name, p.State)
	}
	// Output:
	// db running
	// migrate failed
}
