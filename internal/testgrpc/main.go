// Command testgrpc is a test helper, never part of podvisor: grpc-go's own
// gRPC health server, which the tests of podvisor's gRPC checks
// (internal/health/grpc_test.go) probe as a real server. It listens on
// 127.0.0.1 (an ephemeral port, written to the file named by its one
// argument), with the server as a whole ("") and "up" SERVING and "down"
// NOT_SERVING; with GRPC_NO_HEALTH=1 it runs without the health service;
// GRPC_LISTEN sets the address (default 127.0.0.1:0).
package main

import (
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testgrpc:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: testgrpc ADDR_FILE")
	}
	addr := os.Getenv("GRPC_LISTEN")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	if os.Getenv("GRPC_NO_HEALTH") == "" {
		h := health.NewServer()
		h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
		h.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
		h.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
		healthpb.RegisterHealthServer(srv, h)
	}
	file := os.Args[1]
	if err := os.WriteFile(file+".tmp", []byte(ln.Addr().String()), 0o600); err != nil {
		return err
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		return err
	}
	return srv.Serve(ln)
}
