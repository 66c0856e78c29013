package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// clientOptions are the persistent flags every client command shares.
type clientOptions struct {
	url        string
	user       string
	password   string
	token      string
	caFile     string
	certFile   string
	keyFile    string
	apiVersion string
	timeout    time.Duration
}

var clientOpts clientOptions

func addClientFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&clientOpts.url, "url", envOr("TUNINGBOX_URL", "http://127.0.0.1:8080"), "API base URL (env TUNINGBOX_URL)")
	f.StringVar(&clientOpts.user, "user", os.Getenv("TUNINGBOX_USER"), "user for Basic auth (env TUNINGBOX_USER)")
	f.StringVar(&clientOpts.caFile, "cacert", os.Getenv("TUNINGBOX_CACERT"), "CA certificate file to trust for HTTPS (env TUNINGBOX_CACERT)")
	f.StringVar(&clientOpts.certFile, "client-cert", os.Getenv("TUNINGBOX_CLIENT_CERT"), "client certificate (PEM) to authenticate with, e.g. a Puppet host certificate (env TUNINGBOX_CLIENT_CERT)")
	f.StringVar(&clientOpts.keyFile, "client-key", os.Getenv("TUNINGBOX_CLIENT_KEY"), "private key (PEM) of --client-cert (env TUNINGBOX_CLIENT_KEY)")
	f.StringVar(&clientOpts.apiVersion, "api-version", os.Getenv("TUNINGBOX_API_VERSION"), "API microversion to request, e.g. 1.2 or latest")
	f.DurationVar(&clientOpts.timeout, "timeout", 30*time.Second, "request timeout")
	// Secrets come only from the environment, never from flags that show up in process lists.
	clientOpts.password = os.Getenv("TUNINGBOX_PASSWORD")
	clientOpts.token = os.Getenv("TUNINGBOX_TOKEN")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// apiClient talks JSON to the tuningbox API.
type apiClient struct {
	base    *url.URL
	http    *http.Client
	opts    clientOptions
	version string
}

// apiError is a non-2xx answer of the API.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status) }

func newAPIClient() (*apiClient, error) {
	base, err := url.Parse(strings.TrimRight(clientOpts.url, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, usagef("--url %q is not an http(s) URL", clientOpts.url)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if clientOpts.caFile != "" {
		pem, err := os.ReadFile(clientOpts.caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("%s holds no PEM certificate", clientOpts.caFile)
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	if (clientOpts.certFile == "") != (clientOpts.keyFile == "") {
		return nil, usagef("--client-cert and --client-key go together")
	}
	if clientOpts.certFile != "" {
		pair, err := tls.LoadX509KeyPair(clientOpts.certFile, clientOpts.keyFile)
		if err != nil {
			return nil, usagef("client certificate: %v", err)
		}
		// Offered whatever CAs the server names, so that a certificate of the
		// wrong CA fails in the handshake with a clear error instead of going unsent.
		transport.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return &apiClient{base: base, http: &http.Client{Transport: transport, Timeout: clientOpts.timeout}, opts: clientOpts}, nil
}

// request describes one API call. Path is relative to the base URL and already escaped.
type request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	// Body is sent as JSON: []byte and json.RawMessage as they are, anything else marshalled.
	Body any
}

// response is a decoded API answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends req and returns the response; a non-2xx status becomes an *apiError.
func (c *apiClient) do(ctx context.Context, req request) (*response, error) {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + req.Path
	u.Path, _ = url.PathUnescape(u.RawPath)
	if len(req.Query) > 0 {
		u.RawQuery = req.Query.Encode()
	}
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
	if c.opts.apiVersion != "" && hr.Header.Get("OpenStack-API-Version") == "" {
		hr.Header.Set("OpenStack-API-Version", "config "+c.opts.apiVersion)
	}
	switch {
	case c.opts.token != "":
		hr.Header.Set("Authorization", "Bearer "+c.opts.token)
	case c.opts.user != "":
		hr.SetBasicAuth(c.opts.user, c.opts.password)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := &response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotModified {
		return out, &apiError{Status: resp.StatusCode, Message: errorMessage(data, resp.Status)}
	}
	return out, nil
}

// getJSON sends a GET and decodes the JSON answer into out.
func (c *apiClient) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	resp, err := c.do(ctx, request{Method: http.MethodGet, Path: path, Query: query})
	if err != nil {
		return err
	}
	return json.Unmarshal(resp.Body, out)
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

// errorMessage extracts the message of a JSON error body, falling back to the status text.
func errorMessage(body []byte, status string) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	if s := strings.TrimSpace(string(body)); s != "" && len(s) < 300 {
		return s
	}
	return status
}

// pathEscape escapes each "/"-separated segment of p, keeping the slashes
// (resource names such as override/plugins route with their slash).
func pathEscape(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
