// Command loginflood measures what a wrong-password flood does to another
// user's requests: the latency of a good user's cached reads, first alone, then
// while `flooders` clients send wrong passwords as fast as they are answered.
// It talks only to the server named by -url (127.0.0.1). Part of `make bench`.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:18080", "server base URL")
	user := flag.String("user", "bench", "the good user")
	password := flag.String("password", "", "the good user's password")
	flooders := flag.Int("flooders", 16, "concurrent wrong-password clients")
	duration := flag.Duration("duration", 10*time.Second, "length of each phase")
	flag.Parse()
	read := *url + "/api/v1/config/components"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *flooders + 2}}

	get := func(user, password string) (int, time.Duration, error) {
		req, _ := http.NewRequest("GET", read, nil)
		req.SetBasicAuth(user, password)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start), nil
	}
	phase := func(name string, flood bool) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var statuses [600]atomic.Int64
		if flood {
			for i := range *flooders {
				wg.Go(func() {
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						if status, _, err := get(*user, fmt.Sprintf("wrong-%d-%d", i, n)); err == nil {
							statuses[status].Add(1)
						}
					}
				})
			}
		}
		var latencies []time.Duration
		deadline := time.Now().Add(*duration)
		for time.Now().Before(deadline) {
			status, d, err := get(*user, *password)
			if err != nil || status != http.StatusOK {
				fmt.Fprintf(os.Stderr, "good read: %d %v\n", status, err)
				os.Exit(1)
			}
			latencies = append(latencies, d)
			time.Sleep(5 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		slices.Sort(latencies)
		q := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
		fmt.Printf("%-28s good reads %5d  p50 %8v  p99 %8v  max %8v", name, len(latencies), q(0.5), q(0.99), latencies[len(latencies)-1])
		if flood {
			fmt.Printf("  flood answers: 401 x%d, 429 x%d", statuses[401].Load(), statuses[429].Load())
		}
		fmt.Println()
	}
	if _, _, err := get(*user, *password); err != nil { // verified once, then cached
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	phase("alone", false)
	phase(fmt.Sprintf("during a %d-client flood", *flooders), true)
}
