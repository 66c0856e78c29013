package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// TemplatesPath is the path of the deploy templates (microversion 1.1 on).
const TemplatesPath = "/api/v1/deploy_templates"

// The deploy template bodies (shared/wire): Template is a deploy template (a
// trait name mapped to deploy steps), TemplateAttributes one in a listing
// with the attributes asked for (TemplateQuery.Fields; uuid, name and links
// by default) by name, Step one deploy step, NewTemplate a template to create
// (UUID empty lets the server choose), PatchOp one JSON Patch (RFC 6902)
// operation, StepDefaults an environment's default deploy steps.
type (
	Template           = wire.Template
	TemplateAttributes = wire.TemplateAttributes
	Step               = wire.Step
	NewTemplate        = wire.NewTemplate
	PatchOp            = wire.PatchOp
	StepDefaults       = wire.StepDefaults
)

// TemplateQuery selects and orders templates.
type TemplateQuery struct {
	// Detail shows every attribute; Fields only those named (they do not go together).
	Detail bool
	Fields []string
	// SortKey is name, uuid, created_at or updated_at; SortDir asc or desc.
	SortKey, SortDir string
	// Limit asks for one page of at most Limit templates; 0 lists every page.
	Limit int
	// Marker starts the listing after this template's UUID.
	Marker string
}

func templatePath(ref string) string { return TemplatesPath + "/" + esc(ref) }

// Templates lists templates: one page when q.Limit > 0, else every page.
func (c *Client) Templates(ctx context.Context, q TemplateQuery) ([]TemplateAttributes, error) {
	query := url.Values{}
	if q.Detail {
		query.Set("detail", "true")
	}
	if len(q.Fields) > 0 {
		query.Set("fields", strings.Join(q.Fields, ","))
	}
	for name, v := range map[string]string{"sort_key": q.SortKey, "sort_dir": q.SortDir, "marker": q.Marker} {
		if v != "" {
			query.Set(name, v)
		}
	}
	if q.Limit > 0 {
		query.Set("limit", strconv.Itoa(q.Limit))
	}
	return pages(ctx, c, TemplatesPath, query, q.Limit > 0, "deploy_templates", func(page *wire.TemplateList) ([]TemplateAttributes, string) {
		return page.Templates, page.Next
	})
}

// Template reads a template by UUID or name.
func (c *Client) Template(ctx context.Context, ref string) (*Template, error) {
	var out Template
	_, err := c.call(ctx, http.MethodGet, templatePath(ref), nil, nil, &out)
	return &out, err
}

// CreateTemplate creates a template.
func (c *Client) CreateTemplate(ctx context.Context, in NewTemplate) (*Template, error) {
	var out Template
	_, err := c.call(ctx, http.MethodPost, TemplatesPath, nil, in, &out)
	return &out, err
}

// PatchTemplate changes a template with JSON Patch operations.
func (c *Client) PatchTemplate(ctx context.Context, ref string, ops []PatchOp) (*Template, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(ctx, Request{Method: http.MethodPatch, Path: templatePath(ref), Body: raw,
		Header: http.Header{"Content-Type": {"application/json-patch+json"}}})
	if err != nil {
		return nil, err
	}
	var out Template
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("PATCH %s: unexpected answer: %w", templatePath(ref), err)
	}
	return &out, nil
}

// DeleteTemplate deletes a template.
func (c *Client) DeleteTemplate(ctx context.Context, ref string) error {
	_, err := c.call(ctx, http.MethodDelete, templatePath(ref), nil, nil, nil)
	return err
}

func stepDefaultsPath(env string) string { return "/api/v1/deploy_steps/defaults/" + esc(env) }

// StepDefaults reads an environment's default deploy steps.
func (c *Client) StepDefaults(ctx context.Context, env string) (*StepDefaults, error) {
	var out StepDefaults
	_, err := c.call(ctx, http.MethodGet, stepDefaultsPath(env), nil, nil, &out)
	return &out, err
}

// SetStepDefaults replaces an environment's default deploy steps.
func (c *Client) SetStepDefaults(ctx context.Context, env string, steps json.RawMessage) (*StepDefaults, error) {
	var out StepDefaults
	_, err := c.call(ctx, http.MethodPut, stepDefaultsPath(env), nil, wire.NewStepDefaults{Steps: steps}, &out)
	return &out, err
}

// DeleteStepDefaults removes an environment's default deploy steps.
func (c *Client) DeleteStepDefaults(ctx context.Context, env string) error {
	_, err := c.call(ctx, http.MethodDelete, stepDefaultsPath(env), nil, nil, nil)
	return err
}
