// Package templatesapitest serves the node and deploy template APIs over a
// fresh in-memory store for tests, and talks to them.
package templatesapitest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/nodesapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/templates"
)

// Environments is how many environments the server knows: ids 1 to 9, with
// the UUIDs nodestest.EnvironmentUUID gives.
const Environments = 9

// Client talks to a test server on 127.0.0.1.
type Client struct {
	t   testing.TB
	URL string
}

// NewServer starts the node, deploy template and deploy step routes, plus the
// microversion document, inside the shared middleware; it stops with the test.
func NewServer(t testing.TB) *Client {
	t.Helper()
	b := mem.New()
	nodeSvc := nodes.NewService(b.Index, nodestest.Environments{Count: Environments})
	router := routes.NewRouter(1 << 20)
	router.Mount(routes.Handlers{"versions": httpapi.ServeVersions})
	nodesapi.Register(router, nodeSvc)
	templatesapi.Register(router, templates.NewService(b.Index), nodeSvc)
	srv := httptest.NewServer(httpapi.Wrap(router, httpapi.Options{}))
	t.Cleanup(srv.Close)
	return &Client{t: t, URL: srv.URL}
}

// Reply is an answer, its body decoded when it is a JSON object.
type Reply struct {
	Status int
	Header http.Header
	Raw    string
	Body   map[string]any
}

// Message is the message of a JSON error body.
func (r Reply) Message() string {
	e, _ := r.Body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// Node is the "node" object of a single-node answer.
func (r Reply) Node() map[string]any {
	n, _ := r.Body["node"].(map[string]any)
	return n
}

// Do sends one request at microversion version ("" = no version header, i.e. 1.0).
func (c *Client) Do(method, path, version, body string) Reply {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.URL+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "config "+version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			c.t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
		}
	}
	return out
}

// Expect fails the test unless r has status and a message containing msg.
func (c *Client) Expect(r Reply, status int, msg string) Reply {
	c.t.Helper()
	if r.Status != status || !strings.Contains(r.Message(), msg) {
		c.t.Fatalf("got %d %s, want %d with message containing %q", r.Status, r.Raw, status, msg)
	}
	return r
}
