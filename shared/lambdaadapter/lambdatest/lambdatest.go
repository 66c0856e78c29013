// Package lambdatest helps tests talk to Lambda handlers the way API Gateway
// does: events and answers as JSON, credentials as headers.
package lambdatest

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// RoundTrip passes v through JSON, as API Gateway passes events and answers.
func RoundTrip[T any](t testing.TB, v any) T {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// BasicHeader is the Authorization header value of Basic credentials.
func BasicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}
