// Command killrounds checks that nothing acknowledged is lost and every
// document version has its audit record across crashes: it starts
// `tuningbox serve` on an embedded store, lets concurrent writers PUT
// documents, kills the server with SIGKILL mid-write, and repeats; then it
// counts acknowledged writes, stored versions and audit records with a
// version. Versions must equal audit records, and exceed the acknowledged
// writes by at most the writes in flight at the kills (committed, then killed
// before the answer). Everything runs on 127.0.0.1. Part of `make bench`.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	user     = "killrounds"
	password = "killrounds-password"
	docs     = 4
)

var client = &http.Client{Timeout: 30 * time.Second}

func main() {
	bin := flag.String("bin", "", "tuningbox binary")
	data := flag.String("data", "", "data directory (created)")
	rounds := flag.Int("rounds", 6, "kill -9 rounds")
	writers := flag.Int("writers", 16, "concurrent writers")
	flag.Parse()
	if *bin == "" || *data == "" {
		fail("usage: killrounds -bin TUNINGBOX -data DIR")
	}
	var acked, inFlightAtKills int64
	for round := range *rounds {
		srv, base := start(*bin, *data)
		if round == 0 {
			must(request("POST", base+"/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`))(201)
			must(request("POST", base+"/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role"]}`))(201)
		}
		var ok, inFlight atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range *writers {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					inFlight.Add(1)
					status, err := request("PUT", docURL(base, (w+n)%docs), fmt.Sprintf(`{"round":%d,"writer":%d,"n":%d}`, round, w, n))
					if err == nil {
						inFlight.Add(-1)
						if status == http.StatusNoContent {
							ok.Add(1)
						}
					}
					if err != nil {
						return // the server is gone: this write may or may not have committed
					}
				}
			})
		}
		time.Sleep(time.Duration(1000+rand.IntN(2000)) * time.Millisecond)
		_ = srv.Process.Signal(syscall.SIGKILL)
		_ = srv.Wait()
		close(stop)
		wg.Wait()
		acked += ok.Load()
		inFlightAtKills += inFlight.Load()
		fmt.Printf("round %d: %d writes acknowledged, %d in flight at the kill\n", round+1, ok.Load(), inFlight.Load())
	}
	srv, base := start(*bin, *data)
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	versions := 0
	for d := range docs {
		var list []json.RawMessage
		get(docURL(base, d)+"/versions", &list)
		versions += len(list)
	}
	records := 0
	for before := ""; ; {
		var page struct {
			Records []struct {
				Version int `json:"version"`
			} `json:"records"`
			Next string `json:"next"`
		}
		get(base+"/api/v1/audit?environment=1&limit=1000&before="+before, &page)
		for _, r := range page.Records {
			if r.Version > 0 {
				records++
			}
		}
		if page.Next == "" {
			break
		}
		before = page.Next
	}
	fmt.Printf("%d rounds: %d writes acknowledged, %d versions stored, %d audit records of versions, %d writes in flight at the kills\n",
		*rounds, acked, versions, records, inFlightAtKills)
	if int64(versions) < acked || int64(versions) > acked+inFlightAtKills || records != versions {
		fail("FAIL: want acknowledged <= versions <= acknowledged + in flight, and audit records == versions")
	}
	fmt.Println("ok: no acknowledged write lost, every version has its audit record and no record lacks its version")
}

func docURL(base string, d int) string {
	return fmt.Sprintf("%s/api/v1/config/environments/1/role/r%d/resources/astute/values", base, d)
}

// start runs the server on a free port and waits until it answers.
func start(bin, data string) (*exec.Cmd, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err.Error())
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--listen", addr, "--data", data)
	cmd.Env = append(os.Environ(), "TUNINGBOX_ADMIN_USER="+user, "TUNINGBOX_ADMIN_PASSWORD="+password)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		fail(err.Error())
	}
	base := "http://" + addr
	for range 200 {
		if resp, err := http.Get(base + "/api/v1/config/"); err == nil {
			resp.Body.Close()
			return cmd, base
		}
		time.Sleep(50 * time.Millisecond)
	}
	fail("the server did not start")
	return nil, ""
}

func request(method, url, body string) (int, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(user, password)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func get(url string, v any) {
	req, _ := http.NewRequest("GET", url, nil)
	req.SetBasicAuth(user, password)
	resp, err := client.Do(req)
	if err != nil {
		fail(err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fail(fmt.Sprintf("GET %s: %d", url, resp.StatusCode))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		fail(err.Error())
	}
}

func must(status int, err error) func(int) {
	return func(want int) {
		if err != nil || status != want {
			fail(fmt.Sprintf("set-up request: %d %v, want %d", status, err, want))
		}
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
