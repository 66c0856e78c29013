package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// TestLoneSurrogatesRefused: an escaped UTF-16 surrogate that is not half of a
// pair names no character; encoding/json would store U+FFFD in its place, so
// ReadBody refuses it as invalid UTF-8, at the escape's byte offset. Pairs,
// other escapes and an escaped backslash before "u" pass.
func TestLoneSurrogatesRefused(t *testing.T) {
	for _, c := range []struct {
		body string
		at   int // -1: accepted
	}{
		{`{"a":"\ud800"}`, 6},
		{`{"a":"\uDBFF"}`, 6},
		{`{"a":"\udc00"}`, 6},
		{`{"a":"x\ud800y"}`, 7},
		{`{"a":"\ud800\u0041"}`, 6},
		{`{"a":"\ud800\ud800\udc00"}`, 6},
		{`{"a":"\ud800\n"}`, 6},
		{`{"a":"\ud83d\ude00\udc00"}`, 18},
		{`{"\ud800":1}`, 2},
		{`["ok","\\\ud800"]`, 9},
		{`{"a":"\ud83d\ude00"}`, -1},
		{`{"a":"\uD83D\uDE00 \u00e9 \u0041"}`, -1},
		{`{"a":"\\ud800"}`, -1},
		{`{"a":"\\\\ud800"}`, -1},
		{`{"a":"\"\u0022"}`, -1},
	} {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(c.body))
		_, err := httpapi.ReadBody(r)
		switch {
		case c.at < 0 && err != nil:
			t.Errorf("ReadBody(%s) = %v, want it accepted", c.body, err)
		case c.at >= 0 && (!errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "not valid UTF-8 (at byte "+strconv.Itoa(c.at)+":")):
			t.Errorf("ReadBody(%s) = %v, want a 400 at byte %d", c.body, err, c.at)
		}
	}
}
