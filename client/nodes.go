package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// NodesPath is the path of the node registry.
const NodesPath = "/api/v1/nodes"

// The node registry's bodies (shared/wire).
type (
	Node       = wire.Node
	NewNode    = wire.NewNode
	NodeUpdate = wire.NodeUpdate
	Link       = wire.Link
	PageLink   = wire.PageLink
	// InterfaceValidation is one driver interface's result of ValidateNode.
	InterfaceValidation = wire.InterfaceValidation
)

// NodeQuery selects nodes: a hostname substring search, or pages.
type NodeQuery struct {
	// Hostname keeps the nodes whose FQDN contains it.
	Hostname string
	// Limit asks for one page of at most Limit nodes; 0 lists every page.
	Limit int
	// Marker starts the listing after this node.
	Marker string
}

func nodePath(ref string) string { return NodesPath + "/" + esc(ref) }

// Nodes lists nodes: one page when q.Limit > 0, else every page.
func (c *Client) Nodes(ctx context.Context, q NodeQuery) ([]Node, error) {
	query := url.Values{}
	for name, v := range map[string]string{"hostname": q.Hostname, "marker": q.Marker} {
		if v != "" {
			query.Set(name, v)
		}
	}
	if q.Limit > 0 {
		query.Set("limit", strconv.Itoa(q.Limit))
	}
	return pages(ctx, c, NodesPath, query, q.Limit > 0, "nodes", func(page *wire.NodeList) ([]Node, string) {
		return page.Nodes, nextPage(page.Links)
	})
}

// Node reads a node by UUID or legacy integer id.
func (c *Client) Node(ctx context.Context, ref string) (*Node, error) {
	var out wire.NodeBody
	_, err := c.call(ctx, http.MethodGet, nodePath(ref), nil, nil, &out)
	return &out.Node, err
}

// CreateNode registers a node.
func (c *Client) CreateNode(ctx context.Context, in NewNode) (*Node, error) {
	var out wire.NodeBody
	_, err := c.call(ctx, http.MethodPost, NodesPath, nil, in, &out)
	return &out.Node, err
}

// UpdateNode changes a node.
func (c *Client) UpdateNode(ctx context.Context, ref string, in NodeUpdate) (*Node, error) {
	var out wire.NodeBody
	_, err := c.call(ctx, http.MethodPut, nodePath(ref), nil, in, &out)
	return &out.Node, err
}

// DeleteNode removes a node from the registry.
func (c *Client) DeleteNode(ctx context.Context, ref string) error {
	_, err := c.call(ctx, http.MethodDelete, nodePath(ref), nil, nil, nil)
	return err
}

// DeploySteps plans a node's deploy steps for the instance traits (microversion 1.1).
func (c *Client) DeploySteps(ctx context.Context, ref string, instanceTraits []string) ([]Step, error) {
	if instanceTraits == nil {
		instanceTraits = []string{}
	}
	var out wire.DeploySteps
	_, err := c.call(ctx, http.MethodPost, nodePath(ref)+"/deploy_steps", nil, wire.StepsRequest{InstanceTraits: instanceTraits}, &out)
	if err == nil && out.DeploySteps == nil {
		return nil, fmt.Errorf("POST %s/deploy_steps: unexpected answer: no deploy_steps list", nodePath(ref))
	}
	return out.DeploySteps, err
}

// ValidateNode validates a node's deploy step interfaces against the deploy
// templates its traits enable (microversion 1.1), by interface name.
func (c *Client) ValidateNode(ctx context.Context, ref string) (map[string]InterfaceValidation, error) {
	var out map[string]InterfaceValidation
	_, err := c.call(ctx, http.MethodGet, nodePath(ref)+"/validate", nil, nil, &out)
	return out, err
}

// NodeByFQDN finds the node whose FQDN is fqdn (case and a final dot do not
// matter) by a hostname search, at the base microversion so that its ID is the
// legacy integer id the ConfigDB's nodes level files documents under.
func (c *Client) NodeByFQDN(ctx context.Context, fqdn string) (*Node, error) {
	want := strings.ToLower(strings.TrimSuffix(fqdn, "."))
	found, err := c.At("").Nodes(ctx, NodeQuery{Hostname: want})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("look up node %s: %w", fqdn, err)
	}
	for _, n := range found {
		if strings.EqualFold(n.FQDN, want) {
			return &n, nil
		}
	}
	return nil, fmt.Errorf("no node with FQDN %s is registered: %w", want, ErrNotFound)
}
