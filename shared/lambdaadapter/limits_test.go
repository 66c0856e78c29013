package lambdaadapter_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
)

// v2Event is an HTTP API event for GET path with the given request headers.
func v2Event(t *testing.T, path string, headers map[string]string) json.RawMessage {
	t.Helper()
	ev, err := json.Marshal(map[string]any{
		"version": "2.0", "rawPath": path, "headers": headers,
		"requestContext": map[string]any{"http": map[string]any{"method": "GET", "path": path}, "stage": "$default", "requestId": gatewayRequestID},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// gatewayRequestID is API Gateway's id of the requests v2Event makes.
const gatewayRequestID = "JKJaXmPLvHcESHA="

type v2Response struct {
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
}

// invoke runs ev through an adapter around h whose JSON log lines go to logs.
func invoke(t *testing.T, logs *bytes.Buffer, h http.Handler, ev json.RawMessage) (v2Response, int) {
	t.Helper()
	out, err := lambdaadapter.New(h, slog.New(slog.NewJSONHandler(logs, nil))).Invoke(context.Background(), ev)
	if err != nil {
		t.Fatalf("Invoke returned an error: %v", err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var resp v2Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	return resp, len(raw)
}

// An answer over Lambda's 6 MB response limit never fails the invocation: it
// goes out compressed to a client that accepts gzip, else it is a JSON 406
// that says to ask for gzip, or a 413 when even compressed it would not fit.
func TestAnswersOverTheResponseLimit(t *testing.T) {
	compressible := []byte(`{"v":"` + strings.Repeat("0123456789abcdef", 500_000) + `"}`) // 8 MB
	random := make([]byte, 6_000_000)
	rand.Read(random)
	incompressible := []byte(`{"v":"` + base64.StdEncoding.EncodeToString(random) + `"}`) // 8 MB that gzip shrinks by a quarter
	handler := func(body []byte) http.Handler {
		return httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}), httpapi.Options{})
	}

	var logs bytes.Buffer
	resp, size := invoke(t, &logs, handler(compressible), v2Event(t, "/doc", map[string]string{"accept-encoding": "gzip, deflate"}))
	if resp.StatusCode != 200 || resp.Headers["Content-Encoding"] != "gzip" || !resp.IsBase64Encoded || size > lambdaadapter.MaxResponseBytes {
		t.Fatalf("gzip client: %d %v base64=%v, %d bytes", resp.StatusCode, resp.Headers, resp.IsBase64Encoded, size)
	}
	gz, _ := base64.StdEncoding.DecodeString(resp.Body)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, compressible) {
		t.Fatalf("gunzip: %v (%d bytes)", err, len(got))
	}

	for _, c := range []struct {
		name    string
		body    []byte
		headers map[string]string
		status  int
		message string
	}{
		{"no gzip", compressible, nil, http.StatusNotAcceptable, "Accept-Encoding: gzip"},
		{"gzip refused", compressible, map[string]string{"accept-encoding": "gzip;q=0"}, http.StatusNotAcceptable, "Accept-Encoding: gzip"},
		{"incompressible", incompressible, map[string]string{"accept-encoding": "gzip"}, http.StatusRequestEntityTooLarge, "even compressed"},
	} {
		logs.Reset()
		resp, size := invoke(t, &logs, handler(c.body), v2Event(t, "/doc", c.headers))
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(resp.Body), &e) != nil || resp.StatusCode != c.status || e.Error.Code != c.status ||
			!strings.Contains(e.Error.Message, c.message) || resp.Headers["Content-Type"] != "application/json" || size > 1024 ||
			resp.Headers[httpapi.RequestIDHeader] != gatewayRequestID { // the answer replaced still names the request
			t.Errorf("%s: %d %v %.300s", c.name, resp.StatusCode, resp.Headers, resp.Body)
		}
		line := logLine(t, &logs)
		if line["level"] != "WARN" || line["msg"] != "answer over the Lambda response limit" || line["status"] != 200.0 || line["answered"] != float64(c.status) {
			t.Errorf("%s: logged %v", c.name, line)
		}
	}
}

// logLine decodes the one JSON line logs holds.
func logLine(t *testing.T, logs *bytes.Buffer) map[string]any {
	t.Helper()
	var line map[string]any
	if n := strings.Count(logs.String(), "\n"); n != 1 || json.Unmarshal(logs.Bytes(), &line) != nil {
		t.Fatalf("want one JSON log line, got %d: %s", n, logs.String())
	}
	return line
}

// A panic and an unreadable event are JSON answers, never invocation errors;
// the panic is logged through the adapter's logger.
func TestInvokeNeverFails(t *testing.T) {
	panics := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	var logs bytes.Buffer
	resp, _ := invoke(t, &logs, panics, v2Event(t, "/x", nil))
	if resp.StatusCode != 500 || resp.Body != `{"error":{"code":500,"message":"internal error"}}` {
		t.Errorf("panic: %+v", resp)
	}
	if line := logLine(t, &logs); line["level"] != "ERROR" || line["msg"] != "panic serving a request" || line["panic"] != "boom" || line["path"] != "/x" {
		t.Errorf("panic logged as %v", line)
	}
	for _, ev := range []string{`"not an event"`, `{"version":"2.0","headers":7}`, `{"headers":7}`} {
		resp, _ := invoke(t, &logs, panics, json.RawMessage(ev))
		if resp.StatusCode != 400 || !strings.Contains(resp.Body, "malformed API Gateway event") {
			t.Errorf("%s: %+v", ev, resp)
		}
	}
}
