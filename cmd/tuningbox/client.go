package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
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
	f.StringVar(&clientOpts.apiVersion, "api-version", os.Getenv("TUNINGBOX_API_VERSION"), "API microversion to request, e.g. 1.2, or latest for the newest (env TUNINGBOX_API_VERSION)")
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

// newAPIClient builds the API client the flags describe; extra options come last.
func newAPIClient(extra ...client.Option) (*client.Client, error) {
	opts := []client.Option{client.WithMicroversion(clientOpts.apiVersion), client.WithTimeout(clientOpts.timeout)}
	switch {
	case clientOpts.token != "":
		opts = append(opts, client.WithToken(clientOpts.token))
	case clientOpts.user != "" && clientOpts.password == "":
		return nil, usagef("TUNINGBOX_PASSWORD is not set: the password of user %s comes only from the environment (or set TUNINGBOX_TOKEN)", clientOpts.user)
	case clientOpts.user != "":
		opts = append(opts, client.WithBasicAuth(clientOpts.user, clientOpts.password))
	}
	if clientOpts.caFile != "" {
		opts = append(opts, client.WithCACertFile(clientOpts.caFile))
	}
	if clientOpts.certFile != "" || clientOpts.keyFile != "" {
		opts = append(opts, client.WithClientCertFiles(clientOpts.certFile, clientOpts.keyFile))
	}
	c, err := client.New(clientOpts.url, append(opts, extra...)...)
	if errors.Is(err, client.ErrInvalidOption) {
		return nil, usagef("%v", err)
	}
	return c, err
}

// refsOf names each entity of refs (ids, UUIDs or names) as c's microversion takes it.
func refsOf(ctx context.Context, c *client.Client, kind client.Kind, refs []client.ID) ([]client.ID, error) {
	out := make([]client.ID, len(refs))
	for i, r := range refs {
		ref, err := c.Ref(ctx, kind, string(r))
		if err != nil {
			return nil, err
		}
		out[i] = client.ID(ref)
	}
	return out, nil
}

// withDefaultVersion returns c, or a copy asking for microversion v when the
// user chose none with --api-version.
func withDefaultVersion(c *client.Client, v string) *client.Client {
	if c.Microversion() != "" {
		return c
	}
	return c.At(v)
}
