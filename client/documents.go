package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// Document kinds: the values uploaded for a resource, and the overrides laid over them.
const (
	Values    = "values"
	Overrides = "overrides"
)

// LevelValue is one name=value step of a level path, e.g. nodes=7.
type LevelValue struct{ Name, Value string }

// LevelPath is a path of levels, least specific first; empty is the global level.
type LevelPath []LevelValue

// String writes the path as name=value,... ("global" when empty).
func (p LevelPath) String() string {
	if len(p) == 0 {
		return "global"
	}
	parts := make([]string, len(p))
	for i, l := range p {
		parts[i] = l.Name + "=" + l.Value
	}
	return strings.Join(parts, ",")
}

// DocumentRef addresses the documents of one resource of an environment at one level path.
type DocumentRef struct {
	// Environment is the environment's id or UUID (a UUID from microversion 1.2 on).
	Environment string
	Levels      LevelPath
	// Resource is the resource definition's name or id, e.g. "astute" or "override/plugins".
	Resource string
}

// Path is the URL path of the document of kind (Values or Overrides).
func (d DocumentRef) Path(kind string) string {
	var b strings.Builder
	b.WriteString(environmentPath(d.Environment))
	for _, l := range d.Levels {
		b.WriteString("/" + esc(l.Name) + "/" + esc(l.Value))
	}
	b.WriteString("/resources/" + escPath(d.Resource) + "/" + kind)
	return b.String()
}

// WatchPrefix is the path of the watchers' reads: the path of a document
// under it (WatchPath) is the same read, which API Gateway routes to a
// function and a concurrency pool of their own, apart from Hiera's reads.
const WatchPrefix = "/api/v1/watch"

// WatchPath is the watchers' URL path of the document of kind (microversion 1.3).
func (d DocumentRef) WatchPath(kind string) string {
	return WatchPrefix + strings.TrimPrefix(d.Path(kind), "/api/v1")
}

// String names the documents for messages.
func (d DocumentRef) String() string {
	return fmt.Sprintf("%s of environment %s at %s", d.Resource, d.Environment, d.Levels)
}

// DocumentVersion describes one immutable version of a document; Diff is
// what changed between two documents, by dot key path; DiffSide is one side
// of DiffDocuments.
type (
	DocumentVersion = wire.DocumentVersion
	Diff            = wire.Diff
	DiffSide        = wire.DiffSide
)

// Document is a document as the server answered it.
type Document struct {
	// Body is the JSON document.
	Body json.RawMessage
	// ETag is the strong ETag of the content (for If-None-Match).
	ETag string
	// NotModified is set when a watch ended without a change (304): Body is empty.
	NotModified bool
}

// DocumentQuery says which form of a document to read; the zero value is the
// latest stored version at the document's own level.
type DocumentQuery struct {
	// Version reads an older version of the level's document (0: the latest).
	Version int
	// Effective merges every level of the path (microversion 1.3 for Wait).
	Effective bool
	// Key reads one value by dot path, e.g. network_scheme.endpoints.
	Key string
	// ShowLookup shows each top-level value as [value, "/level/value/"], where it was last set.
	ShowLookup bool
	// Merge is "deep" or "shallow" (default: the resource definition's, else shallow).
	Merge string
	// Explain answers, for every key, its level, version, writer and the layers it shadows (1.3).
	Explain bool
	// AsOf reads every document as it was at this RFC 3339 instant (1.3).
	AsOf string
	// Wait waits up to this long on the server for a change of IfNoneMatch's content (1.3).
	Wait        time.Duration
	IfNoneMatch string
}

func (q DocumentQuery) values() url.Values {
	v := url.Values{}
	if q.Version > 0 {
		v.Set("version", strconv.Itoa(q.Version))
	}
	if q.Effective {
		v.Set("effective", "true")
	}
	if q.Key != "" {
		v.Set("key", q.Key)
	}
	if q.ShowLookup {
		v.Set("show_lookup", "true")
	}
	if q.Merge != "" {
		v.Set("merge", q.Merge)
	}
	if q.Explain {
		v.Set("explain", "true")
	}
	if q.AsOf != "" {
		v.Set("as_of", q.AsOf)
	}
	if q.Wait > 0 {
		v.Set("wait", fmt.Sprint(q.Wait.Seconds()))
	}
	return v
}

// Document reads the document of kind at ref in the form q asks for. A read
// that waits (q.Wait) takes the watchers' path (WatchPath), so that on AWS
// it holds an execution of their pool, not one of the reads'.
func (c *Client) Document(ctx context.Context, ref DocumentRef, kind string, q DocumentQuery) (*Document, error) {
	path := ref.Path(kind)
	if q.Wait > 0 {
		path = ref.WatchPath(kind)
	}
	req := Request{Method: http.MethodGet, Path: path, Query: q.values()}
	if q.IfNoneMatch != "" {
		req.Header = http.Header{"If-None-Match": {q.IfNoneMatch}}
	}
	resp, err := c.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	return &Document{Body: resp.Body, ETag: resp.Header.Get("ETag"), NotModified: resp.Status == http.StatusNotModified}, nil
}

// DocumentVersions lists the versions of the document of kind at ref.
func (c *Client) DocumentVersions(ctx context.Context, ref DocumentRef, kind string) ([]DocumentVersion, error) {
	var out []DocumentVersion
	_, err := c.call(ctx, http.MethodGet, ref.Path(kind)+"/versions", nil, nil, &out)
	return out, err
}

// KeyHistory is a page of a key's history, newest first; KeyChange is one
// version in which the key's value changed, with its writer and the old and
// new values; Writer is who wrote a version (principal, role, request id).
type (
	KeyHistory = wire.KeyHistory
	KeyChange  = wire.KeyChange
	Writer     = wire.Writer
)

// The page sizes of KeyHistory: the server's default and its most.
const (
	DefaultKeyHistoryLimit = 20
	MaxKeyHistoryLimit     = 100
)

// KeyHistory lists the versions of the document of kind at ref in which the
// value at key (a dot path) changed, newest first (microversion 1.3): at most
// limit changes (0: the server's default, 20) in the versions older than
// before (0: from the newest). A page whose Before is set is not the end:
// ask again with that Before.
func (c *Client) KeyHistory(ctx context.Context, ref DocumentRef, kind, key string, before, limit int) (*KeyHistory, error) {
	q := url.Values{"key": {key}}
	if before > 0 {
		q.Set("before", strconv.Itoa(before))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out KeyHistory
	if _, err := c.call(ctx, http.MethodGet, ref.Path(kind)+"/history", q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// versionHeader carries the version number a document write created.
const versionHeader = "X-Config-Version"

// A KeyPath is the path of one value in a document, e.g. ["network", "mtu"].
type KeyPath []string

// PutDocument stores doc as a new version of the document of kind at ref and
// returns the version number the server gave it.
func (c *Client) PutDocument(ctx context.Context, ref DocumentRef, kind string, doc json.RawMessage) (int, error) {
	return c.write(ctx, ref.Path(kind), http.MethodPut, doc)
}

// SetKeys sets values in the stored document of kind at ref atomically:
// each key path with its value. Up to microversion 1.3 every segment before
// the last must exist (else ErrConflict); from 1.4 the missing objects are created.
func (c *Client) SetKeys(ctx context.Context, ref DocumentRef, kind string, sets []KeySet) (int, error) {
	return c.write(ctx, ref.Path(kind)+"/keys/set", http.MethodPatch, sets)
}

// DeleteKeys deletes keys from the stored document of kind at ref atomically.
func (c *Client) DeleteKeys(ctx context.Context, ref DocumentRef, kind string, keys []KeyPath) (int, error) {
	return c.write(ctx, ref.Path(kind)+"/keys/delete", http.MethodPatch, keys)
}

// KeySet is one value to set at a key path; on the wire [seg, ..., value].
type KeySet struct {
	Path  KeyPath
	Value any
}

// MarshalJSON writes the key path's segments followed by the value.
func (k KeySet) MarshalJSON() ([]byte, error) {
	out := make([]any, 0, len(k.Path)+1)
	for _, s := range k.Path {
		out = append(out, s)
	}
	return json.Marshal(append(out, k.Value))
}

func (c *Client) write(ctx context.Context, path, method string, body any) (int, error) {
	resp, err := c.Do(ctx, Request{Method: method, Path: path, Body: body})
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(resp.Header.Get(versionHeader))
	if err != nil {
		return 0, fmt.Errorf("%s %s: no version in the answer", method, path)
	}
	return v, nil
}

// Preview is the answer of a dry-run write: nothing was stored.
type Preview struct {
	// Version is the version the write would create.
	Version int `json:"version"`
	// Affected are the registered nodes whose effective document would change.
	Affected []AffectedNode `json:"affected"`
}

// AffectedNode is one node a write would change and how.
type AffectedNode struct {
	Node    string `json:"node"`
	NodeID  ID     `json:"node_id"`
	Changes Diff   `json:"changes"`
}

// PreviewPut is PutDocument as a dry run (microversion 1.3: ref's environment is a UUID).
func (c *Client) PreviewPut(ctx context.Context, ref DocumentRef, kind string, doc json.RawMessage) (*Preview, error) {
	return c.preview(ctx, ref.Path(kind), http.MethodPut, doc)
}

// PreviewSetKeys is SetKeys as a dry run.
func (c *Client) PreviewSetKeys(ctx context.Context, ref DocumentRef, kind string, sets []KeySet) (*Preview, error) {
	return c.preview(ctx, ref.Path(kind)+"/keys/set", http.MethodPatch, sets)
}

// PreviewDeleteKeys is DeleteKeys as a dry run.
func (c *Client) PreviewDeleteKeys(ctx context.Context, ref DocumentRef, kind string, keys []KeyPath) (*Preview, error) {
	return c.preview(ctx, ref.Path(kind)+"/keys/delete", http.MethodPatch, keys)
}

func (c *Client) preview(ctx context.Context, path, method string, body any) (*Preview, error) {
	var out Preview
	_, err := c.call(ctx, method, path, url.Values{"dry_run": {"true"}}, body, &out)
	return &out, err
}

// DiffDocuments compares two documents on the server (microversion 1.3); it stores nothing.
func (c *Client) DiffDocuments(ctx context.Context, from, to DiffSide) (*Diff, error) {
	var out Diff
	_, err := c.call(ctx, http.MethodPost, ConfigPrefix+"/diff", nil, wire.DiffRequest{From: from, To: to}, &out)
	return &out, err
}
