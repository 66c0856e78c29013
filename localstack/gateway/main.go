// Command gateway is a local API Gateway for tests, written with the standard
// library. It reads the synthesized CloudFormation template of the stack
// (cdk.out, `make synth`), builds the route table of its HTTP API (payload 2.0)
// or REST API (payload 1.0, apiType=rest), and serves it on 127.0.0.1: each
// request goes through the route's Lambda request authorizer (identity source,
// result cache TTL) unless the route is public, then to the route's function.
// Functions are the real `bootstrap` binaries built for the host, run through
// the Runtime API of localstack/lambdaruntime with the template's timeout and
// memory (as GOMEMLIMIT; an environment whose resident set exceeds the memory
// is killed, as Lambda does) and Lambda's 6 MB response limit.
//
//	gateway -template cdk.out/Tuningbox.template.json -bin DIR -table T -bucket B [-parameter NAME=VALUE]...
//
// first does what CloudFormation does at the stack's creation and the gateway
// does not serve itself: it creates the template's secrets in the emulated
// Secrets Manager and runs its custom resources (the first administrator,
// created by the auth function from the generated secret), then prints
// {"url": ..., "api": ..., "outputs": {...}} on stdout once it serves, with
// the stack outputs it can resolve (AdminSecretArn, AdminUserName). On SIGTERM or SIGINT it prints
// what it served (routes exercised, cold and warm timings and peak memory per
// function) and appends the answers of the functions (status, method, path)
// to -routes-log.
//
//	gateway -template ... -openapi openapi.json -coverage ROUTES_LOG
//
// prints "gateway: N of M operations" over every gateway run that logged
// there: the operations of the OpenAPI document (as GET /api/v1/openapi.json
// serves it) that answered one of the statuses the document declares for
// them. It fails unless all did, or when a route of the template reaches no
// operation.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tuningbox/tuningbox/shared/logwriter"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run() error {
	templatePath := flag.String("template", envOr("TUNINGBOX_GATEWAY_TEMPLATE", "cdk.out/Tuningbox.template.json"), "synthesized template (env TUNINGBOX_GATEWAY_TEMPLATE)")
	binDir := flag.String("bin", os.Getenv("TUNINGBOX_GATEWAY_BIN"), "directory of <function>/bootstrap built for this host (env TUNINGBOX_GATEWAY_BIN; default: the template's assets, on their architecture)")
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to serve on")
	table := flag.String("table", "", "DynamoDB table standing in for the stack's table")
	bucket := flag.String("bucket", "", "S3 bucket standing in for the stack's bucket")
	routesLog := flag.String("routes-log", os.Getenv("TUNINGBOX_GATEWAY_ROUTES_LOG"), "append the functions' answers (status, method, path) to this file on exit (env TUNINGBOX_GATEWAY_ROUTES_LOG)")
	coverage := flag.String("coverage", "", "print the operations of -openapi that answered a declared status in this routes log, fail unless all did")
	openAPI := flag.String("openapi", "", "the API's OpenAPI document, for -coverage")
	parameters := map[string]string{}
	flag.Func("parameter", "NAME=VALUE: a stack parameter other than its default (repeatable)", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return fmt.Errorf("want NAME=VALUE")
		}
		parameters[name] = value
		return nil
	})
	flag.Parse()

	if *coverage != "" {
		return printCoverage(*templatePath, *openAPI, *coverage)
	}
	if *table == "" || *bucket == "" {
		return fmt.Errorf("-table and -bucket are required")
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-listen %q: want a loopback address", *listen)
	}
	a, err := loadAPI(*templatePath, *table, *bucket, parameters)
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "", 0)
	g := &gateway{api: a, functions: map[string]*function{}, logger: logger, apiID: "local0gw", exercised: map[string]int{}, answered: map[string]bool{}, authCache: map[string]authResult{}}
	base := functionBaseEnv()
	functionLogs := logwriter.Locked(os.Stderr) // the lines of concurrent function processes, each whole
	for id, spec := range a.functions {
		fn, err := newFunction(spec, *binDir, base, functionLogs)
		if err != nil {
			return err
		}
		g.functions[id] = fn
	}
	defer func() {
		for _, fn := range g.functions {
			fn.close()
		}
	}()
	if err := g.prepare(); err != nil {
		return err
	}
	outputs, err := g.deploy(context.Background(), *table)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	url := "http://" + ln.Addr().String() + a.stage
	out, _ := json.Marshal(map[string]any{"url": url, "api": map[bool]string{true: "rest", false: "http"}[a.rest], "outputs": outputs})
	fmt.Println(string(out))

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	g.report(os.Stderr)
	if *routesLog != "" {
		return g.appendRoutes(*routesLog)
	}
	return nil
}

// functionBaseEnv is what every function process gets from the gateway's
// environment: the AWS settings (emulator endpoints, test credentials), PATH.
func functionBaseEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	emulated := false
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "AWS_LAMBDA_") {
			env = append(env, kv)
			emulated = emulated || strings.HasPrefix(kv, "AWS_ENDPOINT_URL")
		}
	}
	if emulated {
		env = append(env, "TUNINGBOX_S3_PATH_STYLE=true")
	}
	return env
}

// prepare starts the first execution environment of the authorizer (of any
// function when there is none) with the setting that creates the table and
// the bucket, so later functions find them.
func (g *gateway) prepare() error {
	var first *function
	for _, rt := range g.api.routes {
		if rt.authorizer != nil {
			first = g.functions[rt.authorizer.function.logicalID]
			break
		}
	}
	if first == nil {
		first = g.functions[g.api.routes[0].function.logicalID]
	}
	inst, err := first.start("TUNINGBOX_CREATE_RESOURCES=true")
	if err != nil {
		return fmt.Errorf("start %s: %w", first.spec.name, err)
	}
	first.idle = append(first.idle, inst)
	return nil
}

// report prints the routes exercised and each function's timings and memory.
func (g *gateway) report(w io.Writer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	kind := "HTTP API (payload 2.0)"
	if g.api.rest {
		kind = "REST API (payload 1.0)"
	}
	fmt.Fprintf(w, "gateway report: %s, %d routes, authorizer cache hits %d\n", kind, len(g.api.routes), g.cacheHits)
	for _, id := range slices.Sorted(maps.Keys(g.functions)) {
		fn := g.functions[id]
		var keys []string
		for _, rt := range g.api.routes {
			if rt.function.logicalID == id {
				keys = append(keys, fmt.Sprintf("%s=%d", rt.key, g.exercised[rt.key]))
			}
		}
		fn.mu.Lock()
		s := fn.stats
		fn.mu.Unlock()
		fmt.Fprintf(w, "  function %s (%d MB, timeout %v, reserved %d): init %v; first invoke %v; warm invoke %v; failed %d; throttled %d; peak RSS %d MB\n",
			fn.spec.name, fn.spec.memoryMB, fn.spec.timeout, fn.spec.reserved, s.inits, s.cold, s.warm, s.errors, s.throttled, (s.maxRSSKB+1023)/1024)
		if len(keys) > 0 {
			fmt.Fprintf(w, "    routes: %s\n", strings.Join(keys, ", "))
		}
	}
}

// appendRoutes adds the answers of the functions (answerLine), one a line.
func (g *gateway) appendRoutes(name string) error {
	g.mu.Lock()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(g.answered)) {
		b.WriteString(k + "\n")
	}
	g.mu.Unlock()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String()) // one write: concurrent gateways do not interleave lines
	return errors.Join(err, f.Close())
}
