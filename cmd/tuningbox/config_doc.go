package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
)

const configBase = "/api/v1/config"

// nodesLevel is the node-bound hierarchy level: the server takes a node's id,
// FQDN or UUID there and files its documents under the node's id.
const nodesLevel = "nodes"

// parseLevels reads --level "nodes=7" or "role=controller,nodes=node-1.example.com",
// in the environment's level order.
func parseLevels(s string) (client.LevelPath, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var levels client.LevelPath
	for part := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" || value == "" {
			return nil, usagef("--level %q: want name=value[,name=value...]", s)
		}
		levels = append(levels, client.LevelValue{Name: name, Value: value})
	}
	return levels, nil
}

// docFlags are the flags that address a document: --env, --level, --resource.
type docFlags struct {
	env, resource string
	// level holds every --level given: repeating it adds levels, as a comma does.
	level []string
}

func (f *docFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.env, "env", "e", "", "environment id or UUID (required)")
	fl.StringSliceVarP(&f.level, "level", "l", nil, "level path, e.g. nodes=7, nodes=node-1.example.com or role=controller,nodes=7 (repeatable); global when omitted")
	fl.StringVarP(&f.resource, "resource", "r", "", "resource (data source) name or id, e.g. astute or override/plugins (required)")
}

// connect checks the flags, builds the API client and names the environment
// as the client's microversion takes it.
func (f *docFlags) connect(ctx context.Context) (*client.Client, client.DocumentRef, error) {
	if f.env == "" {
		return nil, client.DocumentRef{}, usagef("--env is required")
	}
	if f.resource == "" {
		return nil, client.DocumentRef{}, usagef("--resource is required")
	}
	levels, err := parseLevels(strings.Join(f.level, ","))
	if err != nil {
		return nil, client.DocumentRef{}, err
	}
	c, err := newAPIClient()
	if err != nil {
		return nil, client.DocumentRef{}, err
	}
	env, err := c.Ref(ctx, client.KindEnvironment, f.env)
	if err != nil {
		return nil, client.DocumentRef{}, err
	}
	return c, client.DocumentRef{Environment: env, Levels: levels, Resource: strings.Trim(f.resource, "/")}, nil
}

// Document kinds in URLs.
const (
	kindValues    = client.Values
	kindOverrides = client.Overrides
)

// getDocument reads the document of kind stored at d's level (not merged):
// version 0 is the latest. It returns the decoded value.
func getDocument(ctx context.Context, c *client.Client, d client.DocumentRef, kind string, version int) (any, error) {
	doc, err := c.Document(ctx, d, kind, client.DocumentQuery{Version: version})
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(doc.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d, err)
	}
	return v, nil
}

// putDocument stores doc as a new version of the document of kind and
// returns the version number the server gave it.
// With dry (not nil) nothing is stored: the dry run's preview is printed to dry.
func putDocument(ctx context.Context, c *client.Client, d client.DocumentRef, kind string, doc any, dry io.Writer) (int, error) {
	body, err := canonicalJSON(doc)
	if err != nil {
		return 0, err
	}
	return sendWrite(ctx, c, d, kind, docWrite{put: body}, dry)
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
