package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// EnvironmentImport is what an import wrote.
type EnvironmentImport = wire.EnvironmentImport

// Backup streams a consistent copy of the server's embedded store to w
// (admins only; a 404 on AWS, where the provider keeps the backups).
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	return c.Download(ctx, "/api/v1/store/backup", w)
}

// ExportEnvironment streams the export of environment env (id or UUID) to w:
// the JSON-lines file of shared/envexport.
func (c *Client) ExportEnvironment(ctx context.Context, env string, w io.Writer) (int64, error) {
	return c.Download(ctx, "/api/v1/store/environments/"+esc(env)+"/export", w)
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// ImportEnvironment imports an environment export, all or nothing. It is sent
// gzip-compressed (compressed here unless it is already), which keeps an
// environment's history within the server's body cap: versions repeat most
// of each other.
func (c *Client) ImportEnvironment(ctx context.Context, export []byte) (*EnvironmentImport, error) {
	body := export
	if !bytes.HasPrefix(export, gzipMagic) {
		var zipped bytes.Buffer
		zw := gzip.NewWriter(&zipped)
		if _, err := zw.Write(export); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		body = zipped.Bytes()
	}
	resp, err := c.Do(ctx, Request{Method: http.MethodPost, Path: "/api/v1/store/environments/import",
		Header: http.Header{"Content-Type": {"application/gzip"}}, Body: body})
	if err != nil {
		return nil, err
	}
	var out EnvironmentImport
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("POST /api/v1/store/environments/import: unexpected answer: %w", err)
	}
	return &out, nil
}
