package puppettest

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// backendCase is one Source read by the backend's Ruby code.
type backendCase struct {
	name    string
	options map[string]any
	want    string // canonical JSON of the data, when no error is expected
	wantErr string
}

// backendResult is what the Ruby runner reports for a case.
type backendResult struct {
	Data  json.RawMessage `json:"data"`
	Error string          `json:"error"`
}

// runBackend reads every case with PuppetX::Tuningbox::Source in one Ruby process.
func runBackend(t *testing.T, cases []backendCase) []backendResult {
	t.Helper()
	opts := make([]map[string]any, len(cases))
	for i, c := range cases {
		opts[i] = c.options
	}
	in, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	script := `
require 'json'
require 'puppet_x/tuningbox/source'
results = JSON.parse($stdin.read).map do |opts|
  { 'data' => PuppetX::Tuningbox::Source.new(opts).data }
rescue PuppetX::Tuningbox::Error => e
  { 'error' => e.message }
end
puts JSON.generate(results)
`
	cmd := exec.Command("ruby", "-I", filepath.Join(repoRoot(t), "puppet", "tuningbox", "lib"), "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ruby: %v\n%s", err, out)
	}
	var results []backendResult
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(cases) {
		t.Fatalf("ruby output %s: %v", out, err)
	}
	return results
}

// fakeAPI answers like tuningbox for the paths the backend requests; the
// first path segment picks the behaviour.
func fakeAPI(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{prefix}/api/v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the backend asked the node registry (%s): the server resolves nodes itself", r.URL)
		http.Error(w, `{"error":{"code":500,"message":"unexpected"}}`, http.StatusInternalServerError)
	})
	// The server resolves the node level: node 7 is node-1.example.com.
	node := strings.NewReplacer("/nodes/node-1.example.com/", "/nodes/7/")
	mux.HandleFunc("GET /{prefix}/api/v1/config/{rest...}", func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.Query().Has("effective") {
			t.Errorf("request without ?effective: %s", r.URL)
		}
		user, pass, _ := r.BasicAuth()
		switch r.PathValue("prefix") {
		case "ok":
			if user != "hiera" || pass != "secret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="tuningbox"`)
				http.Error(w, `{"error":{"code":401,"message":"authentication required"}}`, http.StatusUnauthorized)
				return
			}
			switch path := node.Replace(r.URL.EscapedPath()); path {
			case "/ok/api/v1/config/environments/1/role/a%20b/nodes/7/resources/override/plugins/values":
				w.Write([]byte(`{"x": 1, "n": null}`))
			case "/ok/api/v1/config/environments/1/nodes/7/resources/override/node/values":
				w.Write([]byte(`{"node-1.example.com": {"k": "v"}, "node-2.example.com": {"k": "other"}, "scalar.example.com": 3}`))
			case "/ok/api/v1/config/environments/1/nodes/7/resources/astute/values":
				http.Error(w, `{"error":{"code":404,"message":"resource astute not found in environment 1"}}`, http.StatusNotFound)
			default:
				http.Error(w, `{"error":{"code":404,"message":"node `+strings.Split(strings.SplitAfter(path, "/nodes/")[1], "/")[0]+` not found"}}`, http.StatusNotFound)
			}
		case "broken":
			http.Error(w, `{"error":{"code":500,"message":"internal error"}}`, http.StatusInternalServerError)
		case "list":
			w.Write([]byte(`[1, 2]`))
		case "slow":
			select { // until the client gives up
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "tls":
			w.Write([]byte(`{"tls": true}`))
		}
	})
	return mux
}

func TestBackendSource(t *testing.T) {
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("ruby is not installed (puppet/test/run.sh installs puppet-agent, which brings it)")
	}
	plain := httptest.NewServer(fakeAPI(t))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewUnstartedServer(fakeAPI(t))
	// The client without the CA file aborts the handshake, as it should: keep that out of the log.
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}

	opts := func(base string, extra map[string]any) map[string]any {
		o := map[string]any{"uri": base, "environment": "1", "node": "node-1.example.com", "resource": "override/node/node-1.example.com",
			"split": true, "user": "hiera", "password": "secret"}
		for k, v := range extra {
			if v == nil {
				delete(o, k)
			} else {
				o[k] = v
			}
		}
		return o
	}
	ok := plain.URL + "/ok"
	cases := []backendCase{
		{name: "levels in order, node FQDN as given, names escaped, Basic auth",
			options: opts(ok, map[string]any{"levels": map[string]any{"role": "a b"}, "resource": "override/plugins", "split": false}),
			want:    `{"n":null,"x":1}`},
		{name: "Fuel-style split: key fqdn of override/node", options: opts(ok, nil), want: `{"k":"v"}`},
		{name: "split: no key for this node is empty", options: opts(ok, map[string]any{"resource": "override/node/node-9.example.com"}), want: `{}`},
		{name: "split: a key that is not a hash", options: opts(ok, map[string]any{"resource": "override/node/scalar.example.com"}), wantErr: "not a hash"},
		{name: "node given by id", options: opts(ok, map[string]any{"node": "7"}), want: `{"k":"v"}`},
		{name: "404 is an empty data source", options: opts(ok, map[string]any{"resource": "astute", "split": false}), want: `{}`},
		{name: "401 names the credentials", options: opts(ok, map[string]any{"password": "wrong"}), wantErr: "HTTP 401 authentication required (check the user and password options)"},
		{name: "5xx fails the lookup", options: opts(plain.URL+"/broken", map[string]any{"node": "7"}), wantErr: "HTTP 500 internal error"},
		{name: "an answer that is not an object", options: opts(plain.URL+"/list", map[string]any{"node": "7"}), wantErr: "not a JSON object"},
		{name: "a node the server does not know fails the lookup", options: opts(ok, map[string]any{"node": "node-9.example.com"}), wantErr: "HTTP 404 node node-9.example.com not found"},
		{name: "read timeout", options: opts(plain.URL+"/slow", map[string]any{"node": "7", "read_timeout": 0.2}), wantErr: "ReadTimeout"},
		{name: "https with the CA file", options: opts(tlsSrv.URL+"/tls", map[string]any{"node": "7", "ca_file": caFile, "split": false}), want: `{"tls":true}`},
		{name: "https without the CA file is refused", options: opts(tlsSrv.URL+"/tls", map[string]any{"node": "7", "split": false}), wantErr: "certificate verify failed"},
		{name: "an empty interpolation makes no request", options: opts("http://127.0.0.1:1", map[string]any{"node": ""}), want: `{}`},
		{name: "split with an empty key makes no request", options: opts("http://127.0.0.1:1", map[string]any{"resource": "override/class/"}), want: `{}`},
		{name: "environment is required", options: opts(ok, map[string]any{"environment": nil}), wantErr: "option environment is required"},
		{name: "uri must be http(s)", options: opts("ftp://127.0.0.1/", nil), wantErr: "must be an http(s) base URL"},
		{name: "timeouts must be positive", options: opts(ok, map[string]any{"open_timeout": 0}), wantErr: "open_timeout must be a positive number"},
		{name: "a refused connection fails the lookup", options: opts("http://127.0.0.1:1", map[string]any{"node": "7"}), wantErr: "ECONNREFUSED"},
	}
	results := runBackend(t, cases)
	for i, c := range cases {
		got := results[i]
		switch {
		case c.wantErr != "" && !strings.Contains(got.Error, c.wantErr):
			t.Errorf("%s: error %q, data %s; want an error containing %q", c.name, got.Error, got.Data, c.wantErr)
		case c.wantErr == "" && got.Error != "":
			t.Errorf("%s: error %q", c.name, got.Error)
		case c.wantErr == "" && canonical(t, string(got.Data)) != canonical(t, c.want):
			t.Errorf("%s: data %s, want %s", c.name, got.Data, c.want)
		}
	}
}
