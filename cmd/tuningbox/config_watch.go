package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/retry"
)

// maxWatchWait is the server's cap on one wait (configdb.MaxWait).
const maxWatchWait = 25 * time.Second

// watchRetry retries a watch the server could not answer (a 5xx: on AWS a
// watch beyond the watchers' reserved pool is throttled, API Gateway's 500)
// before the command gives up: about a minute of backoff.
var watchRetry = retry.Policy{Attempts: 10, Base: 500 * time.Millisecond, Max: 10 * time.Second}

func newConfigWatchCmd() *cobra.Command {
	var (
		doc    docFlags
		count  int
		merge  string
		format string
	)
	cmd := &cobra.Command{
		Use:   "watch --env ID [--level nodes=ID|FQDN] --resource NAME [--count N] [--merge deep] [--format json|yaml]",
		Short: "Print the effective values of a resource now and again every time they change",
		Long: `Print the effective values of a resource at a level now, then again every time
they change, until interrupted (or after --count documents). Each request
waits on the server for a change (GET /api/v1/watch/config/environments/...
?effective&wait=25 with If-None-Match: the watchers' path, which on AWS has a
function and a concurrency pool of its own), so an unchanged document costs
one request every 25 s.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ref, err := doc.connect(cmd.Context())
			if err != nil {
				return err
			}
			if ref, err = at13(cmd.Context(), c, ref); err != nil {
				return err
			}
			// Each wait ends before the client's own timeout.
			wait := min(maxWatchWait, clientOpts.timeout-5*time.Second)
			if wait < time.Second {
				return usagef("--timeout must be at least 6s to watch")
			}
			c = v13(c)
			q := client.DocumentQuery{Effective: true, Merge: merge, Wait: wait}
			for printed := 0; count == 0 || printed < count; {
				var resp *client.Document
				err := watchRetry.Do(cmd.Context(), func() (err error) {
					resp, err = c.Document(cmd.Context(), ref, kindValues, q)
					return err
				}, client.IsTemporary)
				if err != nil {
					return err
				}
				if resp.NotModified {
					continue
				}
				q.IfNoneMatch = resp.ETag
				v, err := decodeJSON(resp.Body)
				if err != nil {
					return err
				}
				if err := render(cmd.OutOrStdout(), v, format); err != nil {
					return err
				}
				printed++
			}
			return nil
		},
	}
	doc.register(cmd)
	f := cmd.Flags()
	f.IntVar(&count, "count", 0, "stop after printing this many documents (0: until interrupted)")
	f.StringVar(&merge, "merge", "", "deep or shallow (default: the resource definition's, else shallow)")
	f.StringVarP(&format, "format", "f", formatJSON, "output format: json or yaml")
	return cmd
}
