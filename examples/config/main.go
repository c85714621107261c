// Command config is the quickstart driven by a configuration file, as the
// seed's Spring quick start is driven by its application.yaml: the guard's
// settings come from contractguard.yaml, with ${NAME:default}
// placeholders and CONTRACTGUARD_* environment variables over them, and
// the contracts are reloaded when their files change. With
// metrics.enabled, the metrics document is at /actuator/contractguard and
// Prometheus metrics at /metrics.
//
//	go run ./examples/config
//	CONTRACTGUARD_VULNERABILITY_SCAN=false go run ./examples/config
//	go run ./examples/config -config path/to/contractguard.yaml -debug
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contractguard/contractguard"
	cgprometheus "github.com/contractguard/contractguard/prometheus"
)

func main() {
	config := flag.String("config", "examples/config/contractguard.yaml", "the configuration file")
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	debug := flag.Bool("debug", false, "log every rejection (method, route, code, paths)")
	flag.Parse()
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err == nil {
		err = run(ctx, *config, ln, logger)
	}
	if err != nil {
		logger.Error("config example", slog.Any("error", err))
		stop()
		os.Exit(1)
	}
}

// run serves on ln until ctx is done.
func run(ctx context.Context, config string, ln net.Listener, logger *slog.Logger) error {
	defer ln.Close()
	g, h, err := newServer(config, logger)
	if err != nil {
		return err // every bad property or contract, with file:line
	}
	go func() {
		// Edit a file under the contracts folder and the guard reloads it;
		// a broken edit is logged and the running contracts stay.
		if err := g.Watch(ctx); err != nil && !errors.Is(err, context.Canceled) {
			logger.Warn("contracts are not watched", slog.Any("error", err))
		}
	}()
	srv := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	logger.Info("config example: listening", slog.String("url", "http://"+ln.Addr().String()))
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newServer builds the guarded application from the configuration file.
func newServer(config string, logger *slog.Logger) (*contractguard.Guard, http.Handler, error) {
	opts, err := contractguard.LoadConfig(config)
	if err != nil {
		return nil, nil, err
	}
	// What a file cannot say is set in code.
	opts.Logger = logger
	opts.User = func(r *http.Request) any {
		return map[string]any{"role": r.Header.Get("X-Demo-Role")} // stands in for real authentication
	}
	g, err := contractguard.New(opts)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/users", accept)
	mux.HandleFunc("POST /api/orders", accept)
	mux.HandleFunc("GET /api/orders/{orderId}", accept)
	mux.Handle("GET /actuator/contractguard", g.MetricsHandler())
	if opts.Metrics { // metrics.enabled
		reg := prometheus.NewRegistry()
		reg.MustRegister(cgprometheus.NewCollector(g))
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	return g, g.Middleware(mux), nil
}

// accept answers 200 with the route: only requests that passed their
// contract get here.
func accept(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"accepted": r.Method + " " + r.URL.Path})
}
