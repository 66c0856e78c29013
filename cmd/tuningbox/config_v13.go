package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/shared/ident"
)

// The ConfigDB features of microversion 1.3 (merge, explain, as_of, diff,
// dry_run, wait) are asked for at 1.3, whatever --api-version says; from 1.2 on
// a path names its environment by UUID, so the document's environment is resolved first.

// v13 is the header of a 1.3 request.
func v13() http.Header { return http.Header{"Openstack-Api-Version": {"config 1.3"}} }

// at13 returns d with its environment named by UUID.
func at13(ctx context.Context, c *apiClient, d docRef) (docRef, error) {
	if ident.IsUUID(d.Env) {
		return d, nil
	}
	resp, err := c.do(ctx, request{Method: http.MethodGet, Path: configBase + "/environments/" + url.PathEscape(d.Env),
		Header: http.Header{"Openstack-Api-Version": {"config 1.0"}}})
	if err != nil {
		return d, fmt.Errorf("environment %s: %w", d.Env, err)
	}
	var env struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil || env.UUID == "" {
		return d, fmt.Errorf("environment %s: no UUID in %s", d.Env, resp.Body)
	}
	d.Env = env.UUID
	return d, nil
}

// parseAsOf checks an --as-of flag: RFC 3339, e.g. 2026-11-23T19:00:00Z.
func parseAsOf(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
		return "", usagef("--as-of %q: want an RFC 3339 time such as 2026-11-23T19:00:00Z", s)
	}
	return s, nil
}

// serverDiff is the answer of POST /api/v1/config/diff.
type serverDiff struct {
	Added   map[string]any `json:"added"`
	Removed map[string]any `json:"removed"`
	Changed map[string]struct {
		From any `json:"from"`
		To   any `json:"to"`
	} `json:"changed"`
}

// changes lists the diff as the CLI prints diffs, sorted by key path.
func (d serverDiff) changes() []change {
	var out []change
	for p, v := range d.Added {
		out = append(out, change{Path: p, New: v, Op: '+'})
	}
	for p, v := range d.Removed {
		out = append(out, change{Path: p, Old: v, Op: '-'})
	}
	for p, c := range d.Changed {
		out = append(out, change{Path: p, Old: c.From, New: c.To, Op: '~'})
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// levelMap is a level path as the diff body names it.
func levelMap(levels []levelPair) map[string]string {
	m := make(map[string]string, len(levels))
	for _, l := range levels {
		m[l.Name] = l.Value
	}
	return m
}

// withNode returns levels with the node level set to node (added when absent).
func withNode(levels []levelPair, node string) []levelPair {
	out := slices.Clone(levels)
	for i, l := range out {
		if l.Name == "nodes" || l.Name == "node" {
			out[i].Value = node
			return out
		}
	}
	return append(out, levelPair{Name: "nodes", Value: node})
}

// dryRunFlag registers --dry-run on a command that writes a document.
func dryRunFlag(cmd *cobra.Command, dry *bool) {
	cmd.Flags().BoolVar(dry, "dry-run", false, "store nothing: print the version the write would create and how each affected node's effective document would change")
}

// sendWrite sends a document write (PUT of the document, or PATCH of its keys:
// suffix "/keys/set" or "/keys/delete") and returns the version it created. With
// dry (not nil) it is a dry run: nothing is stored and the preview is printed to dry.
func sendWrite(ctx context.Context, c *apiClient, ref docRef, kind, method, suffix string, body []byte, dry io.Writer) (string, error) {
	if dry == nil {
		resp, err := c.do(ctx, request{Method: method, Path: ref.path(kind) + suffix, Body: body})
		if err != nil {
			return "", err
		}
		return resp.Header.Get(versionHeader), nil
	}
	ref13, err := at13(ctx, c, ref)
	if err != nil {
		return "", err
	}
	resp, err := c.do(ctx, request{Method: method, Path: ref13.path(kind) + suffix, Query: url.Values{"dry_run": {"true"}}, Header: v13(), Body: body})
	if err != nil {
		return "", err
	}
	var p struct {
		Version  int `json:"version"`
		Affected []struct {
			Node    string     `json:"node"`
			Changes serverDiff `json:"changes"`
		} `json:"affected"`
	}
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		return "", err
	}
	fmt.Fprintf(dry, "dry run: %s %s would become version %d; nothing stored\n", ref, kind, p.Version)
	if len(p.Affected) == 0 {
		fmt.Fprintln(dry, "no node's effective document would change")
	}
	for _, a := range p.Affected {
		fmt.Fprintf(dry, "node %s:\n", a.Node)
		for _, ch := range a.Changes.changes() {
			var line strings.Builder
			if err := writeDiff(&line, []change{ch}); err != nil {
				return "", err
			}
			first, _, _ := strings.Cut(line.String(), "\n")
			fmt.Fprintf(dry, "  %s\n", first)
		}
	}
	return strconv.Itoa(p.Version), nil
}

// dryOut is where a dry run's preview goes: the command's output, or nil for a real write.
func dryOut(cmd *cobra.Command, dry bool) io.Writer {
	if dry {
		return cmd.OutOrStdout()
	}
	return nil
}
