package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseIdentities(t *testing.T) {
	ctx := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	ids, err := ParseIdentities(ctx())
	if err != nil || ids.Keystone || ids.MTLS.Enabled() {
		t.Fatalf("no context: %+v %v", ids, err)
	}
	ids, err = ParseIdentities(ctx("keystone", "true", "mtlsDomain", "api.example.com", "mtlsCertificateArn", "arn:aws:acm:us-east-1:123456789012:certificate/x",
		"mtlsTruststore", "s3://trust-bucket/puppet/ca.pem", "mtlsTruststoreVersion", "v1"))
	if err != nil || !ids.Keystone || ids.MTLS.TruststoreBucket != "trust-bucket" || ids.MTLS.TruststoreKey != "puppet/ca.pem" || ids.MTLS.TruststoreVersion != "v1" {
		t.Fatalf("all set: %+v %v", ids, err)
	}
	for _, bad := range [][]string{
		{"keystone", "yes"},
		{"mtlsDomain", "api.example.com"},
		{"mtlsDomain", "api.example.com", "mtlsCertificateArn", "arn", "mtlsTruststore", "https://bucket/ca.pem"},
		{"mtlsDomain", "api.example.com", "mtlsCertificateArn", "arn", "mtlsTruststore", "s3://bucket"},
	} {
		if _, err := ParseIdentities(ctx(bad...)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

var allIdentities = Identities{Keystone: true, MTLS: MTLS{Domain: "tuningbox.example.com",
	CertificateArn: "arn:aws:acm:us-east-1:123456789012:certificate/0000", TruststoreBucket: "trust", TruststoreKey: "ca.pem"}}

// TestIdentitiesHTTP: Keystone's stack parameters reach the authorizer (the
// password with NoEcho), the authorizer runs for requests without an
// Authorization header (keyed on the caller's address, no cache), and the API is served
// on the custom domain with mutual TLS and without its execute-api endpoint.
func TestIdentitiesHTTP(t *testing.T) {
	s := synthStack(t, StackProps{API: APIHTTP, Functions: allFunctions, Identities: allIdentities})
	checkIdentityParameters(t, s)

	auth := s.resources[s.ofType("AWS::ApiGatewayV2::Authorizer")[0]].Properties
	if got := fmt.Sprint(auth["IdentitySource"], " ", auth["AuthorizerResultTtlInSeconds"]); got != "[$context.identity.sourceIp] 0" {
		t.Errorf("authorizer identity sources and cache TTL: %s, want [$context.identity.sourceIp] 0", got)
	}
	domains := s.ofType("AWS::ApiGatewayV2::DomainName")
	if len(domains) != 1 {
		t.Fatalf("domain names: %v", domains)
	}
	d := s.resources[domains[0]].Properties
	if got := fmt.Sprint(d["DomainName"], " ", d["MutualTlsAuthentication"]); got != "tuningbox.example.com map[TruststoreUri:s3://trust/ca.pem]" {
		t.Errorf("domain: %s", got)
	}
	if n := len(s.ofType("AWS::ApiGatewayV2::ApiMapping")); n != 1 {
		t.Errorf("%d API mappings, want 1", n)
	}
	api := s.resources[s.ofType("AWS::ApiGatewayV2::Api")[0]].Properties
	if api["DisableExecuteApiEndpoint"] != true {
		t.Errorf("execute-api endpoint not disabled: %v", api["DisableExecuteApiEndpoint"])
	}
	checkMTLSOutputs(t, s)
}

// TestIdentitiesREST is the same for a REST API.
func TestIdentitiesREST(t *testing.T) {
	s := synthStack(t, StackProps{API: APIREST, Functions: allFunctions, Identities: allIdentities})
	checkIdentityParameters(t, s)
	auth := s.resources[s.ofType("AWS::ApiGateway::Authorizer")[0]].Properties
	if auth["IdentitySource"] != "context.identity.sourceIp" || auth["AuthorizerResultTtlInSeconds"] != 0.0 {
		t.Errorf("authorizer identity source %v, cache TTL %v; want context.identity.sourceIp and 0", auth["IdentitySource"], auth["AuthorizerResultTtlInSeconds"])
	}
	d := s.resources[s.ofType("AWS::ApiGateway::DomainName")[0]].Properties
	if got := fmt.Sprint(d["DomainName"], " ", d["MutualTlsAuthentication"], " ", d["EndpointConfiguration"]); got != "tuningbox.example.com map[TruststoreUri:s3://trust/ca.pem] map[Types:[REGIONAL]]" {
		t.Errorf("domain: %s", got)
	}
	api := s.resources[s.ofType("AWS::ApiGateway::RestApi")[0]].Properties
	if api["DisableExecuteApiEndpoint"] != true {
		t.Errorf("execute-api endpoint not disabled: %v", api["DisableExecuteApiEndpoint"])
	}
	checkMTLSOutputs(t, s)
}

func checkIdentityParameters(t *testing.T, s *synthesized) {
	t.Helper()
	params := (*s.template.ToJSON())["Parameters"].(map[string]any)
	byName := map[string]string{}
	for id, name := range s.functionIDs(t) {
		byName[name] = id
	}
	env := s.resources[byName["authorizer"]].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	for param, variable := range map[string]string{
		"KeystoneUrl": "TUNINGBOX_KEYSTONE_URL", "KeystoneUser": "TUNINGBOX_KEYSTONE_USER", "KeystoneSecretArn": "TUNINGBOX_KEYSTONE_PASSWORD_SECRET",
		"KeystoneProject": "TUNINGBOX_KEYSTONE_PROJECT", "KeystoneRoles": "TUNINGBOX_KEYSTONE_ROLES", "KeystoneCache": "TUNINGBOX_KEYSTONE_CACHE",
		"ServerCertnames": "TUNINGBOX_SERVER_CERTNAMES",
	} {
		if _, ok := params[param]; !ok {
			t.Errorf("no stack parameter %s", param)
		}
		if got := fmt.Sprint(env[variable]); got != "map[Ref:"+param+"]" {
			t.Errorf("authorizer's %s = %s, want a Ref of %s", variable, got, param)
		}
	}
	// The password itself is in no environment: the authorizer may read its secret.
	if _, ok := env["TUNINGBOX_KEYSTONE_PASSWORD"]; ok {
		t.Error("the Keystone password is an environment variable")
	}
	if !slices.ContainsFunc(s.statements(t)["authorizer"], func(st map[string]any) bool {
		return fmt.Sprint(st["Action"], st["Resource"]) == "secretsmanager:GetSecretValuemap[Ref:KeystoneSecretArn]"
	}) {
		t.Errorf("the authorizer may not read the Keystone secret: %v", s.statements(t)["authorizer"])
	}
	for name, id := range byName {
		if vars := fmt.Sprint(s.resources[id].Properties["Environment"]); name != "authorizer" && strings.Contains(vars, "KEYSTONE") {
			t.Errorf("function %s gets the Keystone settings: %s", name, vars)
		}
	}
}

func checkMTLSOutputs(t *testing.T, s *synthesized) {
	t.Helper()
	if got := fmt.Sprint(s.outputs["ApiUrl"].(map[string]any)["Value"]); got != "https://tuningbox.example.com/" {
		t.Errorf("ApiUrl = %s, want the custom domain", got)
	}
	if _, ok := s.outputs["MtlsDomainTarget"]; !ok {
		t.Error("no MtlsDomainTarget output for the DNS record")
	}
}
