package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// netHTTPErrorHeaders is what net/http writes after the status line of an
// answer it gives itself, before any handler runs, to a request it cannot
// parse (a bad request line or percent-escape, a malformed header, an
// unsupported Transfer-Encoding). No handler's answer has this shape: those
// carry a Date header.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// badRequestLine is the message of net/http's bare "400 Bad Request", which
// says no more; these are the requests it answers so.
const badRequestLine = "Bad Request: the request line or a header cannot be parsed (a bad percent-escape in the path, a bad method or HTTP version)"

// jsonServerError rewrites p when it is one of net/http's own plain-text error
// answers (written whole, in one write, straight to the connection) as the
// same status with a JSON error body, so that every answer is JSON.
func jsonServerError(p []byte) ([]byte, bool) {
	// Cheap for every other write: a look at the status line only.
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 4")) && !bytes.HasPrefix(p, []byte("HTTP/1.1 5")) {
		return nil, false
	}
	end := bytes.IndexByte(p, '\r')
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(netHTTPErrorHeaders)) {
		return nil, false
	}
	statusLine, rest := p[:end], p[end+len(netHTTPErrorHeaders):]
	codeText, reason, _ := bytes.Cut(statusLine[len("HTTP/1.1 "):], []byte(" "))
	code, err := strconv.Atoi(string(codeText))
	if err != nil || code < 400 || code > 599 {
		return nil, false
	}
	// The body repeats the status line (or says what is unsupported): keep its words.
	message := string(bytes.TrimPrefix(rest, append(codeText, ' ')))
	if message == "Bad Request" {
		message = badRequestLine
	}
	if message == "" {
		message = string(reason)
	}
	body, _ := json.Marshal(ErrorBody{Error: ErrorDetail{Code: code, Message: message}})
	return fmt.Appendf(nil, "%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", statusLine, len(body), body), true
}
