package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/tuningbox/tuningbox/shared/app/core"
)

// The auth function answers CloudFormation's event at its ResponseURL and
// API Gateway's events as before.
func TestLambdaAuthAnswersTheCustomResource(t *testing.T) {
	answers := make(chan map[string]any, 1)
	cfnServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var answer map[string]any
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &answer)
		answers <- answer
	}))
	defer cfnServer.Close()
	env := map[string]string{"TUNINGBOX_BACKEND": core.BackendEmbedded, "TUNINGBOX_DATA": t.TempDir()}
	handle, err := LambdaAuth(context.Background(), func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// No secret reader is reachable here: the resource fails, and says so to CloudFormation.
	ev, _ := json.Marshal(cfn.Event{RequestType: cfn.RequestCreate, RequestID: "r1", ResponseURL: cfnServer.URL + "/response?" + url.Values{"sig": {"x"}}.Encode(),
		StackID: "stack", LogicalResourceID: "FirstAdministrator", ResourceProperties: map[string]any{AdminSecretProperty: ""}})
	if _, err := handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-answers:
		if a["Status"] != "FAILED" || a["LogicalResourceId"] != "FirstAdministrator" {
			t.Errorf("answer %v", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer at the ResponseURL")
	}
	out, err := handle(context.Background(), json.RawMessage(`{"version":"2.0","rawPath":"/api/v1/users","requestContext":{"http":{"method":"GET","path":"/api/v1/users"}}}`))
	if raw, _ := json.Marshal(out); err != nil || !strings.Contains(string(raw), `"statusCode":401`) {
		t.Errorf("unauthenticated API event: %s %v", raw, err)
	}
}

// capWait lowers only waits above the cap; TUNINGBOX_MAX_WAIT sets it.
func TestCapWait(t *testing.T) {
	var got string
	h := capWait(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.URL.RawQuery }), 10*time.Second)
	const read = "/api/v1/config/environments/1/resources/astute/values"
	for target, want := range map[string]string{
		read + "?wait=25&key=a":        "wait=10&key=a",
		read + "?key=a&wait=30&wait=1": "key=a&wait=10",
		read + "?wait=4.5":             "wait=4.5",
		read + "?wait=soon":            "wait=soon",
		read + "?key=a":                "key=a",
		"/api/v1/watch/config/environments/1/resources/astute/values?effective&wait=25": "effective&wait=10", // the watchers' path, capped the same
		"/api/v1/config/components?wait=25":                                             "wait=25",           // a route without ?wait (the router refuses it)
	} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
		if got != want {
			t.Errorf("%s: the handler saw %s, want %s", target, got, want)
		}
	}
	for env, want := range map[string]time.Duration{"": 0, "10": 10 * time.Second, "2.5": 2500 * time.Millisecond} {
		cfg, err := LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_MAX_WAIT": env}[k] })
		if err != nil || cfg.MaxWait != want {
			t.Errorf("TUNINGBOX_MAX_WAIT=%q: %v %v", env, cfg.MaxWait, err)
		}
	}
	if _, err := LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_MAX_WAIT": "-1"}[k] }); err == nil {
		t.Error("a negative cap was accepted")
	}
}
