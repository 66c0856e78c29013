package puppettest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// stockLookupKey is a Hiera 5 lookup_key function that reads a data source the
// way the stock hiera_http backend does through lookup_http: one Net::HTTP
// object, Net::HTTP::Get of the interpolated uri's path with basic_auth, sent
// without starting a session (so Net::HTTP adds Connection: close), Ruby's
// default Accept */* and User-Agent Ruby; output json, ignore_404, and the key
// dug out of the returned hash.
const stockLookupKey = `require 'json'
require 'net/http'
Puppet::Functions.create_function(:'stockhttp::lookup_key') do
  dispatch :lookup_key do
    param 'Variant[String, Numeric]', :key
    param 'Hash', :options
    param 'Puppet::LookupContext', :context
  end

  def lookup_key(key, options, context)
    uri = URI(options['uri'])
    http = Net::HTTP.new(uri.host, uri.port)
    request = Net::HTTP::Get.new(uri.request_uri)
    request.basic_auth(options['auth_user'], options['auth_pass']) if options['use_auth']
    response = http.request(request)
    return context.not_found if response.code == '404' && options['ignore_404']
    raise "hiera_http: HTTP #{response.code} #{response.body}" unless response.is_a?(Net::HTTPSuccess)
    data = JSON.parse(response.body)
    data.key?(key) ? data[key] : context.not_found
  end
end
`

// stockHieraYAML is the README's hiera_http entry: the whole effective
// document of the node named by its certname, the short path.
const stockHieraYAML = `version: 5
hierarchy:
  - name: "tuningbox globals"
    lookup_key: stockhttp::lookup_key
    uri: "%[1]s/api/v1/config/environments/%[2]s/nodes/%%{trusted.certname}/resources/globals/values?effective"
    options: &stock { output: json, ignore_404: true, use_auth: true, auth_user: %[3]s, auth_pass: %[4]s }
  - name: "tuningbox astute"
    lookup_key: stockhttp::lookup_key
    uri: "%[1]s/api/v1/config/environments/%[2]s/nodes/%%{trusted.certname}/resources/astute/values?effective"
    options: *stock
`

// checkStockHieraHTTP runs puppet lookup through the stock hiera_http request
// shape on certname URIs: node-1 in environment 1 ([role, nodes]) and node-3
// in environment 2 ([nodes]) get the data written under their ids. A proxy in
// front of the server records the requests as they arrive.
func checkStockHieraHTTP(t *testing.T, root string, srv *server, node1Facts string) {
	target, err := url.Parse(srv.url)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []http.Header
	)
	upstream := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		if r.Close {
			h.Set("Connection", "close")
		}
		mu.Lock()
		seen = append(seen, h)
		mu.Unlock()
		upstream.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	cases := []struct {
		env, node, key, want, why string
	}{
		{"1", "node-1.domain.tld", "written_by", `"id 7"`, "[role, nodes]: node-1's globals written at role=controller,nodes=7"},
		{"1", "node-1.domain.tld", "deployment_id", "42", "[role, nodes]: node-1's astute override, written by FQDN, same document as by id"},
		{"1", "node-1.domain.tld", "role_key", `"controller-value"`, "[role, nodes]: the controller role from the registry's placement"},
		{"2", "node-3.domain.tld", "written_by", `"id 9"`, "[nodes]: node-3's astute written at nodes=9"},
		{"2", "node-3.domain.tld", "region", `"env-2"`, "[nodes]: environment 2's global value"},
	}
	for _, c := range cases {
		p := newPuppet(t, root, fmt.Sprintf(stockHieraYAML, proxy.URL, c.env, hieraUser, hieraPassword))
		fn := filepath.Join(p.dir, "code", "environments", "production", "modules", "stockhttp", "lib", "puppet", "functions", "stockhttp")
		if err := os.MkdirAll(fn, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fn, "lookup_key.rb"), []byte(stockLookupKey), 0o644); err != nil {
			t.Fatal(err)
		}
		facts := node1Facts
		if c.node != "node-1.domain.tld" {
			facts = p.facts(t, c.node, "none")
		}
		got, found, _ := p.lookup(t, c.node, facts, c.key)
		if !found || canonical(t, got) != canonical(t, c.want) {
			t.Errorf("hiera_http %s %s: %q (found %v), want %s (%s)", c.node, c.key, got, found, c.want, c.why)
			continue
		}
		t.Logf("hiera_http request shape: %-18s %-13s = %-18s (%s)", c.node, c.key, got, c.why)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no request reached the proxy")
	}
	for _, h := range seen {
		if h.Get("Accept") != "*/*" || h.Get("User-Agent") != "Ruby" || h.Get("Connection") != "close" ||
			!strings.HasPrefix(h.Get("Authorization"), "Basic ") {
			t.Errorf("a request not shaped like hiera_http's: %v", h)
		}
	}
	t.Logf("hiera_http request shape: %d requests, each Accept %q, User-Agent %q, Connection %q, Basic auth",
		len(seen), seen[0].Get("Accept"), seen[0].Get("User-Agent"), seen[0].Get("Connection"))
}
