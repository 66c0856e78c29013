package localstack

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tbclient "github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// Tests of the serverless path through the local API Gateway
// (localstack/gateway): run-integration.sh sets TUNINGBOX_GATEWAY to the API
// type ("http" or "rest") when TUNINGBOX_URL is such a gateway, whose
// authorizer and functions are the real bootstraps.

// gatewayClient returns the suite's client and the API type, or skips the test
// when TUNINGBOX_URL is not a gateway.
func gatewayClient(t *testing.T) (*client, string) {
	t.Helper()
	apiType := os.Getenv("TUNINGBOX_GATEWAY")
	if apiType == "" {
		t.Skip("TUNINGBOX_URL is not the local API Gateway (TUNINGBOX_GATEWAY unset)")
	}
	return newClient(t), apiType
}

// raw sends a request with the given Authorization header (none when empty)
// and returns the status and the body, without the suite's error-body check:
// API Gateway's own refusals are {"message": ...}.
func (c *client) raw(method, path, authorization string, body string) (int, http.Header, []byte) {
	c.t.Helper()
	anonymous, err := tbclient.New(c.server)
	if err != nil {
		c.t.Fatal(err)
	}
	var header []string
	if authorization != "" {
		header = []string{"Authorization", authorization}
	}
	var sent any
	if body != "" {
		sent = body
	}
	r := c.send(anonymous, method, path, sent, header...)
	return r.status, r.header, r.body
}

// gatewayMessage is the body of a refusal by API Gateway itself.
func gatewayMessage(t *testing.T, body []byte) string {
	t.Helper()
	var m struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Message == "" {
		t.Fatalf("want API Gateway's {\"message\"} body, got %q", body)
	}
	return m.Message
}

// The authorization cases through the real authorizer: who is refused where,
// and by whom (API Gateway itself or the route's function).
func TestGatewayAuthorization(t *testing.T) {
	c, apiType := gatewayClient(t)
	const components = "/api/v1/config/components"

	// No Authorization header: API Gateway refuses before any function runs.
	status, _, body := c.raw("GET", components, "", "")
	if status != http.StatusUnauthorized || gatewayMessage(t, body) != "Unauthorized" {
		t.Errorf("anonymous: %d %s, want 401 Unauthorized", status, body)
	}

	// A wrong password: the authorizer refuses it. An HTTP API's simple
	// response can only say 403; a REST API's authorizer answers 401.
	status, _, body = c.raw("GET", components, basic("nobody-"+randomSuffix(), "wrong-password"), "")
	want := map[string]int{"http": http.StatusForbidden, "rest": http.StatusUnauthorized}[apiType]
	if status != want {
		t.Errorf("wrong password: %d %s, want %d", status, body, want)
	}
	gatewayMessage(t, body)

	// The public route: the microversion document needs no credentials.
	status, _, body = c.raw("GET", "/api/v1/config", "", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"min_version"`) {
		t.Errorf("public microversion route: %d %s", status, body)
	}
	// And the OpenAPI document of the route table.
	status, _, body = c.raw("GET", "/api/v1/openapi.json", "", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"openapi":"3.1.0"`) {
		t.Errorf("public OpenAPI route: %d %.200s", status, body)
	}

	// An observer is let through by the authorizer, and the config function
	// refuses its write with the API's own JSON error.
	admin := c.under("/api/v1")
	observer, password := "observer-"+randomSuffix(), "observer-password-1"
	admin.want(http.StatusCreated, "POST", "/users", map[string]any{"name": observer, "password": password, "role": "observer"})
	status, _, body = c.raw("GET", components, basic(observer, password), "")
	if status != http.StatusOK {
		t.Errorf("observer read: %d %s", status, body)
	}
	status, hdr, body := c.raw("POST", components, basic(observer, password), `{"name":"observer-write"}`)
	r := response{status: status, header: hdr, body: body}
	if status != http.StatusForbidden {
		t.Errorf("observer write: %d %s, want 403", status, body)
	}
	c.checkErrorBody("POST", components, r)

	// A Bearer token of the administrator works like its password.
	var token struct {
		Secret string `json:"secret"`
	}
	admin.want(http.StatusCreated, "POST", "/tokens", map[string]any{"description": "gateway test"}).decode(t, &token)
	if token.Secret == "" {
		t.Fatal("no token issued")
	}
	status, _, body = c.raw("GET", components, "Bearer "+token.Secret, "")
	if status != http.StatusOK {
		t.Errorf("Bearer token: %d %s", status, body)
	}
}

// Every operation of the OpenAPI document reaches its function through the
// stack's routes: an answer of the function (an unknown id, a missing body),
// not a refusal of API Gateway (whose answers carry x-amzn-ErrorType), but
// GET /metrics, which the stack does not route: on Lambda it would read one
// instance's counters, and the functions' EMF lines are the metrics there.
func TestGatewayRouteWalk(t *testing.T) {
	c, _ := gatewayClient(t)
	status, _, body := c.raw("GET", "/api/v1/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); status != http.StatusOK || err != nil {
		t.Fatalf("GET /api/v1/openapi.json: %d %v", status, err)
	}
	unknown := regexp.MustCompile(`\{[^}]+\}`)
	n := 0
	for path, item := range doc.Paths {
		for method := range item {
			method, path := strings.ToUpper(method), unknown.ReplaceAllString(path, "999999")
			r := c.send(c.api, method, path, nil)
			if path == routes.MetricsPath {
				// No route: an HTTP API answers 404, a REST API 403 (Missing Authentication Token).
				if r.status != http.StatusNotFound && r.status != http.StatusForbidden || r.header.Get("x-amzn-ErrorType") == "" {
					t.Errorf("%s %s = %d (x-amzn-ErrorType %q), want API Gateway's own refusal: no route", method, path, r.status, r.header.Get("x-amzn-ErrorType"))
				}
				continue
			}
			if r.status >= 500 || r.header.Get("x-amzn-ErrorType") != "" {
				t.Errorf("%s %s = %d (x-amzn-ErrorType %q)", method, path, r.status, r.header.Get("x-amzn-ErrorType"))
			}
			n++
		}
	}
	t.Logf("%d operations reach their functions", n)
}

func basic(user, password string) string {
	req, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
}

// An answer over Lambda's 6 MB response limit: compressed for a client that
// accepts gzip, a JSON 406 for one that does not; answers carry Content-Length.
func TestGatewayLargeAnswers(t *testing.T) {
	c, _ := gatewayClient(t)
	f := setUp(t, c)
	values := make([]string, 0, 400_000)
	for i := range cap(values) {
		values = append(values, fmt.Sprintf("value-%07d", i))
	}
	doc, err := json.Marshal(map[string]any{"big": values})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) < 6<<20 {
		t.Fatalf("the document is only %d bytes", len(doc))
	}
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values"), string(doc))
	path := f.prefix + f.doc("astute", "values") + "?effective"

	get := func(acceptEncoding string) response {
		// Set by hand: the transport does not decode it then.
		r := c.send(c.api, "GET", path, nil, "Accept-Encoding", acceptEncoding)
		if r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
			t.Errorf("Accept-Encoding %q: Content-Length %q for %d bytes", acceptEncoding, r.header.Get("Content-Length"), len(r.body))
		}
		return r
	}
	r := get("gzip")
	body := r.body
	if r.status != http.StatusOK || r.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip client: %d %q", r.status, r.header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !jsonEqual(plain, doc) {
		t.Fatalf("gunzipped answer (%d bytes, %v) differs from the document", len(plain), err)
	}
	t.Logf("%d bytes sent as %d gzip bytes", len(plain), len(body))

	r = get("identity")
	if r.status != http.StatusNotAcceptable || !strings.Contains(string(r.body), "Accept-Encoding: gzip") {
		t.Errorf("client without gzip: %d %.300s", r.status, r.body)
	}
	c.checkErrorBody("GET", path, r)
}

// timedSend sends a request with the suite's Basic credentials and the
// given header pairs straight to the gateway, and returns its status and
// how long the answer took (the pool tests time throttled answers).
func timedSend(t *testing.T, c *client, method, path string, header ...string) (int, time.Duration) {
	req, err := http.NewRequestWithContext(t.Context(), method, c.server+path, nil)
	if err != nil {
		t.Error(err)
		return 0, 0
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(os.Getenv("TUNINGBOX_USER")+":"+os.Getenv("TUNINGBOX_PASSWORD"))))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// TestGatewayLongPollsHaveTheirOwnPool: run-integration.sh starts the HTTP
// API's gateway with LongPollReservedConcurrency (TUNINGBOX_GATEWAY_LONG_POLL_POOL),
// which it enforces as Lambda does. Waiting claims that fill the claims
// function's pool get a further claim throttled at once (API Gateway's 500
// for a throttled Lambda invocation), while the ConfigDB answers a read.
func TestGatewayLongPollsHaveTheirOwnPool(t *testing.T) {
	c, apiType := gatewayClient(t)
	pool, _ := strconv.Atoi(os.Getenv("TUNINGBOX_GATEWAY_LONG_POLL_POOL"))
	if apiType != "http" || pool == 0 {
		t.Skip("the gateway has no long-poll pool (HTTP API with TUNINGBOX_GATEWAY_LONG_POLL_POOL)")
	}
	const wait = 4 * time.Second
	send := func(method, path string) (int, time.Duration) { return timedSend(t, c, method, path) }
	// A claim on a cluster with no transaction waits its whole wait (idle).
	claim := fmt.Sprintf("/api/v1/clusters/990001/nodes/1/claim?wait=%d", int(wait.Seconds()))
	send("GET", "/api/v1/config/components") // the authorizer's answer, cached, and config warm

	type answer struct {
		status int
		took   time.Duration
	}
	held := make(chan answer, pool)
	for range pool {
		go func() {
			status, took := send("POST", claim)
			held <- answer{status, took}
		}()
	}
	time.Sleep(wait / 2) // the held claims are waiting
	if status, took := send("POST", claim); status != http.StatusInternalServerError || took > wait/2 {
		t.Errorf("a claim beyond the pool of %d: %d after %v, want API Gateway's 500 for a throttled invocation at once", pool, status, took)
	}
	if status, took := send("GET", "/api/v1/config/components"); status != http.StatusOK {
		t.Errorf("a read while the claims' pool is full: %d after %v, want 200", status, took)
	} else {
		t.Logf("a read while %d claims wait: 200 in %v", pool, took)
	}
	for range pool {
		a := <-held
		if a.status != http.StatusOK || a.took < wait-time.Second {
			t.Errorf("a held claim: %d after %v, want 200 after its %v wait", a.status, a.took, wait)
		}
	}
}

// TestGatewayWatchesHaveTheirOwnPool: run-integration.sh starts the HTTP
// API's gateway with WatchReservedConcurrency (TUNINGBOX_GATEWAY_WATCH_POOL).
// Config watches (the watchers' path, /api/v1/watch/...) that fill the watch
// function's pool get a further watch throttled at once, while Hiera's read
// of the same effective document, on its own path, answers 200 from the
// config function.
func TestGatewayWatchesHaveTheirOwnPool(t *testing.T) {
	c, apiType := gatewayClient(t)
	pool, _ := strconv.Atoi(os.Getenv("TUNINGBOX_GATEWAY_WATCH_POOL"))
	if apiType != "http" || pool == 0 {
		t.Skip("the gateway has no watch pool (HTTP API with TUNINGBOX_GATEWAY_WATCH_POOL)")
	}
	const wait = 4 * time.Second
	f := setUp(t, c)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values"), `{"ntp":"pool.example.com"}`)
	v13 := []string{"OpenStack-API-Version", "config 1.3"}
	// From 1.2 on, paths name the environment by its UUID.
	document := "/environments/" + f.env.UUID + "/resources/astute/values?effective"
	hiera := tbclient.ConfigPrefix + document
	etag := f.want(http.StatusOK, "GET", document, nil, v13...).header.Get("ETag")
	if etag == "" {
		t.Fatal("the effective document has no ETag")
	}
	// An unchanged document: each watch waits its whole wait, then 304.
	watch := tbclient.WatchPrefix + "/config" + document + fmt.Sprintf("&wait=%d", int(wait.Seconds()))
	watching := append(v13, "If-None-Match", etag)

	type answer struct {
		status int
		took   time.Duration
	}
	held := make(chan answer, pool)
	for range pool {
		go func() {
			status, took := timedSend(t, c, "GET", watch, watching...)
			held <- answer{status, took}
		}()
	}
	time.Sleep(wait / 2) // the held watches are waiting
	if status, took := timedSend(t, c, "GET", watch, watching...); status != http.StatusInternalServerError || took > wait/2 {
		t.Errorf("a watch beyond the pool of %d: %d after %v, want API Gateway's 500 for a throttled invocation at once", pool, status, took)
	} else {
		t.Logf("a watch beyond the pool of %d: 500 in %v", pool, took)
	}
	if status, took := timedSend(t, c, "GET", hiera, v13...); status != http.StatusOK {
		t.Errorf("Hiera's read while the watches' pool is full: %d after %v, want 200", status, took)
	} else {
		t.Logf("Hiera's read while %d watches wait: 200 in %v", pool, took)
	}
	for range pool {
		a := <-held
		if a.status != http.StatusNotModified || a.took < wait-time.Second {
			t.Errorf("a held watch: %d after %v, want 304 after its %v wait", a.status, a.took, wait)
		} else {
			t.Logf("a held watch: 304 after %v", a.took)
		}
	}
}
