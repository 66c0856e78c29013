package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

const configBase = "/api/v1/config"

// nodesLevel is the node-bound hierarchy level: the server takes a node's id,
// FQDN or UUID there and files its documents under the node's id.
const nodesLevel = "nodes"

// levelPair is one name=value of --level.
type levelPair struct{ Name, Value string }

// parseLevels reads --level "nodes=7" or "role=controller,nodes=node-1.example.com",
// in the environment's level order.
func parseLevels(s string) ([]levelPair, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var levels []levelPair
	for part := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" || value == "" {
			return nil, usagef("--level %q: want name=value[,name=value...]", s)
		}
		levels = append(levels, levelPair{Name: name, Value: value})
	}
	return levels, nil
}

// formatLevels is the inverse of parseLevels, for messages ("global" when empty).
func formatLevels(levels []levelPair) string {
	if len(levels) == 0 {
		return "global"
	}
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = l.Name + "=" + l.Value
	}
	return strings.Join(parts, ",")
}

// isNodeID reports whether s is a legacy integer id or a UUID rather than an FQDN.
func isNodeID(s string) bool {
	return isIntegerID(s) || len(s) == 36 && strings.Count(s, "-") == 4 && strings.Trim(strings.ToLower(s), "0123456789abcdef-") == ""
}

// nodeIDByFQDN looks fqdn up in the node registry (GET /api/v1/nodes?hostname=,
// a substring search) and returns the id of the node whose FQDN is exactly fqdn.
// Node ids at the nodes level are the legacy integer ids (what Hiera and spec
// 000 use), so the lookup is made at the base microversion, whatever
// --api-version says.
func nodeIDByFQDN(ctx context.Context, c *apiClient, fqdn string) (string, error) {
	want := strings.ToLower(strings.TrimSuffix(fqdn, "."))
	base := *c
	base.opts.apiVersion = ""
	notFound := &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no node with FQDN %s is registered", want)}
	resp, err := base.do(ctx, request{Method: http.MethodGet, Path: "/api/v1/nodes", Query: url.Values{"hostname": {want}}})
	var apiErr *apiError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return "", notFound
	}
	if err != nil {
		return "", fmt.Errorf("look up node %s: %w", fqdn, err)
	}
	var page struct {
		Nodes []struct {
			ID   json.Number `json:"id"`
			FQDN string      `json:"fqdn"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(resp.Body, &page); err != nil {
		return "", fmt.Errorf("look up node %s: unexpected answer: %w", fqdn, err)
	}
	for _, n := range page.Nodes {
		if strings.EqualFold(n.FQDN, want) {
			return n.ID.String(), nil
		}
	}
	return "", notFound
}

// isIntegerID reports whether s is written like a legacy integer id.
func isIntegerID(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// docRef addresses the documents of one resource at one level path.
type docRef struct {
	Env      string
	Levels   []levelPair
	Resource string
}

// path is the URL path of the document of kind ("values" or "overrides").
func (d docRef) path(kind string) string {
	var b strings.Builder
	b.WriteString(configBase + "/environments/" + url.PathEscape(d.Env))
	for _, l := range d.Levels {
		b.WriteString("/" + url.PathEscape(l.Name) + "/" + url.PathEscape(l.Value))
	}
	b.WriteString("/resources/" + pathEscape(d.Resource) + "/" + kind)
	return b.String()
}

// String names the document for messages.
func (d docRef) String() string {
	return fmt.Sprintf("%s of environment %s at %s", d.Resource, d.Env, formatLevels(d.Levels))
}

// docFlags are the flags that address a document: --env, --level, --resource.
type docFlags struct {
	env, level, resource string
}

func (f *docFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.env, "env", "e", "", "environment id (required)")
	fl.StringVarP(&f.level, "level", "l", "", "level path, e.g. nodes=7 or nodes=node-1.example.com; global when omitted")
	fl.StringVarP(&f.resource, "resource", "r", "", "resource (data source) name or id, e.g. astute or override/plugins (required)")
}

// connect checks the flags and builds the API client.
func (f *docFlags) connect(ctx context.Context) (*apiClient, docRef, error) {
	if f.env == "" {
		return nil, docRef{}, usagef("--env is required")
	}
	if f.resource == "" {
		return nil, docRef{}, usagef("--resource is required")
	}
	levels, err := parseLevels(f.level)
	if err != nil {
		return nil, docRef{}, err
	}
	c, err := newAPIClient()
	if err != nil {
		return nil, docRef{}, err
	}
	return c, docRef{Env: f.env, Levels: levels, Resource: strings.Trim(f.resource, "/")}, nil
}

// Document kinds in URLs.
const (
	kindValues    = "values"
	kindOverrides = "overrides"
)

// getDocument reads the document of kind stored at d's level (not merged):
// version 0 is the latest. It returns the decoded value and the ETag.
func getDocument(ctx context.Context, c *apiClient, d docRef, kind string, version int) (any, string, error) {
	var q url.Values
	if version > 0 {
		q = url.Values{"version": {fmt.Sprint(version)}}
	}
	resp, err := c.do(ctx, request{Method: http.MethodGet, Path: d.path(kind), Query: q})
	if err != nil {
		return nil, "", err
	}
	v, err := decodeJSON(resp.Body)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", d, err)
	}
	return v, resp.Header.Get("ETag"), nil
}

// versionHeader carries the version number a document write created.
const versionHeader = "X-Config-Version"

// putDocument stores doc as a new version of the document of kind and
// returns the version number the server gave it.
// With dry (not nil) nothing is stored: the dry run's preview is printed to dry.
func putDocument(ctx context.Context, c *apiClient, d docRef, kind string, doc any, dry io.Writer) (string, error) {
	body, err := canonicalJSON(doc)
	if err != nil {
		return "", err
	}
	return sendWrite(ctx, c, d, kind, http.MethodPut, "", body, dry)
}

// splitKey turns --key a.b.0 into path segments.
func splitKey(key string) ([]string, error) {
	segs := strings.Split(key, ".")
	for _, s := range segs {
		if s == "" {
			return nil, usagef("--key %q has an empty segment", key)
		}
	}
	return segs, nil
}
