// Command httpceiling is the ceiling of net/http on this machine for the bench's
// hot path: a trivial handler that checks Basic credentials the way tuningbox
// checks a cached one (HMAC-SHA256 of the pair, compared in constant time) and
// answers a file's bytes, or its .gz beside it for gzip clients, with
// Content-Length, on a plain http.Server. `make bench` runs it beside tuningbox
// and nginx, so the ratios show what net/http itself costs and what tuningbox
// adds to it, or saves: tuningbox's own connections send an answer in one
// system call (httpapi.CoalescingListener), net/http's in two.
// With -headers, it also sends the header lines of that file (as curl -D
// writes them: tuningbox's own answer headers), so that it answers the same
// bytes as tuningbox, headers included: what net/http costs to send
// tuningbox's answer, beside what it costs to send the body alone.
// It listens on -listen (127.0.0.1) only.
package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"flag"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18083", "address to listen on")
	file := flag.String("file", "", "the answer (plain); FILE.gz is the gzip answer")
	user := flag.String("user", "bench", "the accepted user")
	password := flag.String("password", "", "the accepted user's password")
	headersFile := flag.String("headers", "", "answer headers to send too (curl -D output; its status line, Date and the content headers are left out)")
	flag.Parse()
	extra, err := readHeaders(*headersFile)
	if err != nil {
		log.Fatal(err)
	}
	plain, err := os.ReadFile(*file)
	if err != nil {
		log.Fatal(err)
	}
	gz, err := os.ReadFile(*file + ".gz")
	if err != nil {
		log.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	mac := func(user, password string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(user + "\x00" + password))
		return m.Sum(nil)
	}
	want := mac(*user, *password)
	handler := func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || !hmac.Equal(mac(u, p), want) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		for name, values := range extra {
			w.Header()[name] = values
		}
		body := plain
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			body = gz
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
	log.Fatal(http.ListenAndServe(*listen, http.HandlerFunc(handler)))
}

// readHeaders reads the header lines of a curl -D dump ("" reads none): every
// line "Name: value" but the status line, Date and the headers the handler
// sets itself.
func readHeaders(file string) (http.Header, error) {
	h := http.Header{}
	if file == "" {
		return h, nil
	}
	dump, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(dump), "\n") {
		name, value, ok := strings.Cut(strings.TrimRight(line, "\r"), ": ")
		switch name = http.CanonicalHeaderKey(name); {
		case !ok, name == "Date", name == "Content-Length", name == "Content-Type", name == "Content-Encoding":
			continue
		}
		h.Add(name, value)
	}
	return h, nil
}
