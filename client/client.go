package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// Client talks JSON to one tuningbox server. It is safe for concurrent use;
// At returns a copy that asks for another microversion.
type Client struct {
	base      *url.URL
	http      *http.Client
	transport *http.Transport
	version   string
	user      string
	password  string
	token     string
}

// Option configures a Client in New.
type Option func(*Client) error

// ErrInvalidOption is wrapped in New's error when an option is unusable: a
// base URL that is not http(s), a CA file without a certificate, a client
// certificate without its key.
var ErrInvalidOption = errors.New("invalid client option")

// DefaultTimeout bounds one request (the answer included) unless WithTimeout says otherwise.
const DefaultTimeout = 30 * time.Second

// New returns a client of the API at baseURL, e.g. https://tuningbox.example.com:8443.
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q is not an http(s) URL", ErrInvalidOption, baseURL)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	c := &Client{base: base, transport: transport, http: &http.Client{Transport: transport, Timeout: DefaultTimeout}}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// WithBasicAuth authenticates every request as user with password.
func WithBasicAuth(user, password string) Option {
	return func(c *Client) error {
		c.user, c.password = user, password
		return nil
	}
}

// WithToken authenticates every request with an API token (Bearer); it wins over Basic auth.
func WithToken(token string) Option {
	return func(c *Client) error {
		c.token = token
		return nil
	}
}

// WithMicroversion asks for API microversion v ("1.2", "latest") in every
// request: the header OpenStack-API-Version: config v. Empty is the server's base version.
func WithMicroversion(v string) Option {
	return func(c *Client) error {
		c.version = v
		return nil
	}
}

// WithTimeout bounds each request, its answer included (0: no bound but the context's).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		c.http.Timeout = d
		return nil
	}
}

// WithCACertFile trusts the CA certificates of a PEM file (instead of the system's) for HTTPS.
func WithCACertFile(path string) Option {
	return func(c *Client) error {
		pem, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%w: %s holds no PEM certificate", ErrInvalidOption, path)
		}
		c.transport.TLSClientConfig.RootCAs = pool
		return nil
	}
}

// WithClientCertFiles authenticates with a client certificate and its key
// (PEM files), e.g. a Puppet host certificate.
func WithClientCertFiles(certFile, keyFile string) Option {
	return func(c *Client) error {
		if certFile == "" || keyFile == "" {
			return fmt.Errorf("%w: a client certificate and its key go together", ErrInvalidOption)
		}
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("%w: client certificate: %w", ErrInvalidOption, err)
		}
		// Offered whatever CAs the server names, so that a certificate of the
		// wrong CA fails in the handshake with a clear error instead of going unsent.
		c.transport.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
		return nil
	}
}

// WithHTTPClient sends requests through hc (its transport and timeout) instead of the client's own.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		c.http = hc
		return nil
	}
}

// At returns a copy of c that asks for microversion v.
func (c *Client) At(v string) *Client {
	out := *c
	out.version = v
	return &out
}

// Microversion is the microversion c asks for ("" for the server's base version).
func (c *Client) Microversion() string { return c.version }

// Request is one API call for Do.
type Request struct {
	Method string
	// Path is relative to the base URL and already escaped, e.g. "/api/v1/nodes/" + url.PathEscape(ref);
	// it may carry a query ("?effective"), as the API's next links do, which Query adds to.
	Path   string
	Query  url.Values
	Header http.Header
	// Body is sent as JSON: []byte and json.RawMessage as they are, anything else marshalled.
	Body any
}

// Response is an answer of the API in 2xx or 304.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req and reads the answer. A status outside 2xx and 304 is an *Error.
// The typed methods go through it; it is exported for what they do not cover.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	resp, err := c.send(ctx, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotModified {
		return out, apiError(resp, data)
	}
	return out, nil
}

// apiError is the *Error of an answer outside 2xx whose body is data.
func apiError(resp *http.Response, data []byte) *Error {
	return &Error{Status: resp.StatusCode, Message: errorMessage(data, resp.Status), RetryAfter: retryAfter(resp.Header)}
}

// Download sends a GET of path and copies the answer's body to w as it
// arrives (a backup, an export: more than is worth holding), returning the
// bytes copied. A status outside 2xx is an *Error and nothing is copied.
// The client's timeout bounds the whole download (WithTimeout(0): none).
func (c *Client) Download(ctx context.Context, path string, w io.Writer) (int64, error) {
	resp, err := c.send(ctx, Request{Method: http.MethodGet, Path: path})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return 0, apiError(resp, data)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("GET %s: the answer broke off after %d bytes: %w", path, n, err)
	}
	return n, nil
}

// send sends req and returns the answer whatever its status; the caller closes its body.
func (c *Client) send(ctx context.Context, req Request) (*http.Response, error) {
	u := *c.base
	path, query, _ := strings.Cut(req.Path, "?")
	u.RawPath = c.base.EscapedPath() + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	if len(req.Query) > 0 {
		query = strings.TrimPrefix(query+"&"+req.Query.Encode(), "&")
	}
	u.RawQuery = query
	var body io.Reader
	if req.Body != nil {
		raw, err := encodeBody(req.Body)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	if req.Body != nil && hr.Header.Get("Content-Type") == "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Accept", "application/json")
	if c.version != "" && hr.Header.Get("OpenStack-API-Version") == "" {
		hr.Header.Set("OpenStack-API-Version", "config "+c.version)
	}
	switch {
	case c.token != "":
		hr.Header.Set("Authorization", "Bearer "+c.token)
	case c.user != "":
		hr.SetBasicAuth(c.user, c.password)
	}
	return c.http.Do(hr)
}

// call sends a request and decodes its JSON answer into out (when not nil).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any) (*Response, error) {
	resp, err := c.Do(ctx, Request{Method: method, Path: path, Query: query, Body: body})
	if err != nil {
		return resp, err
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return resp, fmt.Errorf("%s %s: unexpected answer: %w", method, path, err)
		}
	}
	return resp, nil
}

// pages reads a paged listing at path: one page when one is set, else every
// page, following each page's link to the next. read gives a page's items
// (nil when the answer has no such list) and the path of the next page ("" on the last).
func pages[P, T any](ctx context.Context, c *Client, path string, query url.Values, one bool, list string, read func(*P) (items []T, next string)) ([]T, error) {
	var all []T
	for {
		var page P
		if _, err := c.call(ctx, http.MethodGet, path, query, nil, &page); err != nil {
			return nil, err
		}
		items, next := read(&page)
		if items == nil {
			return nil, fmt.Errorf("GET %s: unexpected answer: no %s list", path, list)
		}
		all = append(all, items...)
		if one || next == "" || len(items) == 0 {
			return all, nil
		}
		path, query = next, nil
	}
}

func encodeBody(body any) ([]byte, error) {
	switch b := body.(type) {
	case []byte:
		return b, nil
	case json.RawMessage:
		return b, nil
	default:
		return json.Marshal(b)
	}
}

// errorMessage extracts the message of a JSON error body, falling back to the body or the status text.
func errorMessage(body []byte, status string) string {
	var e wire.ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	if s := strings.TrimSpace(string(body)); s != "" && len(s) < 300 {
		return s
	}
	return status
}

// retryAfter reads a Retry-After header given in seconds.
func retryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }

// escPath escapes each "/"-separated segment of p, keeping the slashes
// (resource names such as override/plugins route with their slash).
func escPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
