// Package events holds API Gateway request fixtures for the tuningbox Lambda
// functions and what tests need to replay them:
//
//	v1/<group>-<case>.json   REST API events (payload format 1.0)
//	v2/<group>-<case>.json   HTTP API events (payload format 2.0)
//	seed.json                requests that build the data every fixture expects (SeedStore)
//	testdata/<v>/<name>.golden.json  the expected responses, normalized
//
// <group> is the endpoint group (and Lambda function) that serves the event.
// The golden test (shared/lambdaadapter) pushes every fixture through the
// adapter, each over its own copy of the seeded store; the runtime test
// (localstack/lambdaruntime) sends them to the real bootstrap binaries.
// `go test ./shared/lambdaadapter -run TestGoldenEvents -update` rewrites the golden files. With the SAM CLI, a fixture is also
// an event for `sam local invoke -e events/v2/config-list-components.json`.
package events

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

//go:embed v1/*.json v2/*.json seed.json
var files embed.FS

// Fixture is one API Gateway event.
type Fixture struct {
	// Name is "<payload version>/<file name without .json>", e.g. "v2/config-list-components".
	Name string
	// Group is the endpoint group that serves the event.
	Group   string
	Payload json.RawMessage
}

// GoldenFile is the path of the fixture's golden response, relative to this directory.
func (f Fixture) GoldenFile() string { return path.Join("testdata", f.Name+".golden.json") }

// Load returns every fixture, sorted by name.
func Load() ([]Fixture, error) {
	var out []Fixture
	for _, dir := range []string{"v1", "v2"} {
		names, err := fs.Glob(files, dir+"/*.json")
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			data, err := files.ReadFile(name)
			if err != nil {
				return nil, err
			}
			if !json.Valid(data) {
				return nil, fmt.Errorf("%s: not valid JSON", name)
			}
			base := strings.TrimSuffix(path.Base(name), ".json")
			group, _, ok := strings.Cut(base, "-")
			if !ok {
				return nil, fmt.Errorf("%s: name is not <group>-<case>.json", name)
			}
			out = append(out, Fixture{Name: dir + "/" + base, Group: group, Payload: data})
		}
	}
	return out, nil
}

// Settings are the environment variables that a function serving the fixtures
// needs besides its store: the administrator whose Basic credentials the seed
// requests and most fixtures carry (created at start-up).
var Settings = map[string]string{
	"TUNINGBOX_ADMIN_USER":     "admin",
	"TUNINGBOX_ADMIN_PASSWORD": "fixture-admin-password",
}

// seedRequest is one request of seed.json.
type seedRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// SeedStore creates in dir the embedded store that every fixture expects: the
// requests of seed.json, replayed as the administrator through a handler of
// every endpoint group with Settings.
func SeedStore(dir string) error {
	b, err := bolt.Open(dir)
	if err != nil {
		return err
	}
	defer b.Close()
	cfg, err := app.LoadConfig(func(name string) string { return Settings[name] })
	if err != nil {
		return err
	}
	h, err := server.NewHandler(b, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	return seed(h)
}

// CopyStore copies the embedded store in dir src (closed) into dir dst, so
// that every fixture starts from the same data without seeding it again.
func CopyStore(src, dst string) error {
	data, err := os.ReadFile(filepath.Join(src, bolt.FileName))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, bolt.FileName), data, 0o600)
}

// seed replays seed.json through h and fails on the first response that is not a success.
func seed(h http.Handler) error {
	data, err := files.ReadFile("seed.json")
	if err != nil {
		return err
	}
	var requests []seedRequest
	if err := json.Unmarshal(data, &requests); err != nil {
		return fmt.Errorf("seed.json: %w", err)
	}
	for _, sr := range requests {
		req := httptest.NewRequest(sr.Method, sr.Path, bytes.NewReader(sr.Body))
		req.SetBasicAuth(Settings["TUNINGBOX_ADMIN_USER"], Settings["TUNINGBOX_ADMIN_PASSWORD"])
		if len(sr.Body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range sr.Headers {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 300 {
			return fmt.Errorf("seed %s %s: %d %s", sr.Method, sr.Path, w.Code, w.Body)
		}
	}
	return nil
}

// Response is the part of a Lambda response the golden files compare.
type Response struct {
	StatusCode int `json:"statusCode"`
	// Headers are the compared headers (see comparedHeaders) that were set.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the body as JSON when it is JSON, else as a string.
	Body json.RawMessage `json:"body,omitempty"`
}

// comparedHeaders are the headers whose values the golden files pin down;
// the rest (Date, Content-Length) vary or say nothing about behaviour.
var comparedHeaders = []string{
	"Allow", "Cache-Control", "Content-Type", "ETag", "Location", "Vary", "WWW-Authenticate",
	"OpenStack-API-Version", "X-OpenStack-Config-API-Version", "X-Config-Version", httpapi.RequestIDHeader,
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// NormalizeResponse turns a Lambda response of either payload version (as
// JSON) into a Response whose generated values are stable: each distinct UUID
// becomes <uuid-N> in order of appearance, timestamps become <time>.
func NormalizeResponse(raw []byte) (Response, error) {
	var r struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, fmt.Errorf("decode Lambda response: %w", err)
	}
	if r.IsBase64Encoded {
		return Response{}, fmt.Errorf("unexpected base64 body in %s", raw)
	}
	header := http.Header{}
	for k, v := range r.Headers {
		header.Set(k, v)
	}
	for k, vs := range r.MultiValueHeaders {
		header[http.CanonicalHeaderKey(k)] = vs
	}
	uuids := map[string]string{}
	stable := func(s string) string {
		s = timePattern.ReplaceAllString(s, "<time>")
		return uuidPattern.ReplaceAllStringFunc(s, func(u string) string {
			if _, ok := uuids[u]; !ok {
				uuids[u] = fmt.Sprintf("<uuid-%d>", len(uuids)+1)
			}
			return uuids[u]
		})
	}
	out := Response{StatusCode: r.StatusCode}
	for _, name := range comparedHeaders {
		if vs := header.Values(name); len(vs) > 0 {
			if out.Headers == nil {
				out.Headers = map[string]string{}
			}
			if name == httpapi.RequestIDHeader {
				out.Headers[name] = vs[0] // the fixture's own requestId: pinned as it is
				continue
			}
			out.Headers[name] = stable(strings.Join(vs, ", "))
		}
	}
	if r.Body != "" {
		body := stable(r.Body)
		if json.Valid([]byte(body)) {
			out.Body = json.RawMessage(body)
		} else {
			out.Body, _ = json.Marshal(body)
		}
	}
	return out, nil
}

// Marshal renders a Response as a golden file.
func (r Response) Marshal() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <uuid-1> readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		panic(err) // a Response always encodes
	}
	return buf.Bytes()
}

// Groups lists the endpoint groups the fixtures cover.
func Groups(fixtures []Fixture) []string {
	var groups []string
	for _, f := range fixtures {
		if !slices.Contains(groups, f.Group) {
			groups = append(groups, f.Group)
		}
	}
	slices.Sort(groups)
	return groups
}
