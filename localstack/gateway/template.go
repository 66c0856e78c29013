package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// resource is one resource of a CloudFormation template.
type resource struct {
	Type       string
	Properties map[string]any
	Metadata   map[string]any
}

type template struct {
	Parameters map[string]struct{ Default any }
	Conditions map[string]any
	Resources  map[string]resource
	Outputs    map[string]struct{ Value any }
}

// api is what the gateway serves: the routes of one API, HTTP (payload 2.0) or REST (1.0).
type api struct {
	rest bool
	// stage prefixes every REST API path ("/prod"); an HTTP API serves $default at the root.
	stage string
	// binaryMediaTypes (REST) are the media types passed as binary rather than base64 text.
	binaryMediaTypes []string
	routes           []*route
	functions        map[string]*functionSpec // by logical id
	// template is what the API was read from; deploy creates its secrets and custom resources.
	template *template
}

// route is one route (HTTP API) or method of a resource (REST API).
type route struct {
	key    string // "ANY /api/v1/config/{proxy+}", as the template names it
	method string // GET, ..., or ANY
	path   string // without the trailing "/{proxy+}"
	greedy bool   // path/{proxy+}: one or more segments below path
	// authorizer is nil on a public route (AuthorizationType NONE).
	authorizer *authorizerSpec
	function   *functionSpec
	payloadV2  bool
}

type authorizerSpec struct {
	id       string
	function *functionSpec
	// sources are the identity source: header names (lower case) and
	// sourceIP for the caller's address; a request missing a header is
	// refused before the authorizer runs.
	sources   []identitySource
	ttl       time.Duration
	payloadV2 bool
}

// identitySource is one part of an authorizer's identity source.
type identitySource struct {
	header   string // lower case; "" for the caller's address
	sourceIP bool
}

// parseIdentitySource reads "$request.header.X" / "method.request.header.X"
// and "$context.identity.sourceIp" / "context.identity.sourceIp".
func parseIdentitySource(s string) (identitySource, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if h, ok := strings.CutPrefix(s, "request.header."); ok {
		return identitySource{header: strings.ToLower(h)}, nil
	}
	if h, ok := strings.CutPrefix(s, "method.request.header."); ok {
		return identitySource{header: strings.ToLower(h)}, nil
	}
	if s == "context.identity.sourceIp" {
		return identitySource{sourceIP: true}, nil
	}
	return identitySource{}, fmt.Errorf("identity source %q is not emulated", s)
}

// functionSpec is a Lambda function of the template.
type functionSpec struct {
	logicalID string
	name      string // its directory under functions/ (from the construct path Tuningbox/<Name>/Function)
	asset     string // the asset directory holding the template's bootstrap
	arch      string
	memoryMB  int
	timeout   time.Duration
	env       map[string]string
	// reserved is its reserved concurrency (ReservedConcurrentExecutions), 0 for none.
	reserved int
}

// loadAPI reads a synthesized template (cdk.out/<Stack>.template.json) and
// builds the route table of the API it defines. table and bucket stand in for
// the references to the stack's DynamoDB table and S3 bucket; parameters
// override stack parameters' defaults, as a deploy's --parameters do.
func loadAPI(path, table, bucket string, parameters map[string]string) (*api, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t template
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for name, value := range parameters {
		if _, ok := t.Parameters[name]; !ok {
			return nil, fmt.Errorf("%s has no parameter %s", path, name)
		}
		t.Parameters[name] = struct{ Default any }{value}
	}
	a := &api{functions: map[string]*functionSpec{}, template: &t}
	for id, r := range t.Resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		fn, err := t.function(id, r, filepath.Dir(path), table, bucket)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		a.functions[id] = fn
	}
	switch {
	case t.has("AWS::ApiGatewayV2::Api"):
		err = t.httpRoutes(a)
	case t.has("AWS::ApiGateway::RestApi"):
		a.rest = true
		err = t.restRoutes(a)
	default:
		err = fmt.Errorf("%s defines no API Gateway API", path)
	}
	if err != nil {
		return nil, err
	}
	if len(a.routes) == 0 {
		return nil, fmt.Errorf("%s: the API has no routes", path)
	}
	slices.SortFunc(a.routes, func(x, y *route) int { return strings.Compare(x.key, y.key) })
	return a, nil
}

func (t *template) has(typ string) bool {
	for _, r := range t.Resources {
		if r.Type == typ {
			return true
		}
	}
	return false
}

func (t *template) function(id string, r resource, dir, table, bucket string) (*functionSpec, error) {
	p := r.Properties
	fn := &functionSpec{logicalID: id, memoryMB: 128, timeout: 3 * time.Second, env: map[string]string{}, arch: "x86_64"}
	cdkPath, _ := r.Metadata["aws:cdk:path"].(string) // Tuningbox/Config/Function/Resource
	parts := strings.Split(cdkPath, "/")
	if len(parts) < 2 {
		return nil, fmt.Errorf("no construct path to name the function by")
	}
	fn.name = strings.ToLower(parts[1])
	if asset, ok := r.Metadata["aws:asset:path"].(string); ok {
		fn.asset = filepath.Join(dir, asset)
	}
	if n, ok := p["MemorySize"].(float64); ok {
		fn.memoryMB = int(n)
	}
	if n, ok := p["Timeout"].(float64); ok {
		fn.timeout = time.Duration(n) * time.Second
	}
	if v, ok := p["ReservedConcurrentExecutions"]; ok {
		n, set, err := t.value(v)
		if err != nil {
			return nil, fmt.Errorf("ReservedConcurrentExecutions: %w", err)
		}
		if set {
			if _, err := fmt.Sscan(fmt.Sprint(n), &fn.reserved); err != nil {
				return nil, fmt.Errorf("ReservedConcurrentExecutions %v: %w", n, err)
			}
		}
	}
	if archs, ok := p["Architectures"].([]any); ok && len(archs) > 0 {
		fn.arch, _ = archs[0].(string)
	}
	env, _ := p["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	for k, v := range vars {
		switch v := v.(type) {
		case string:
			fn.env[k] = v
		case map[string]any:
			ref, _ := v["Ref"].(string)
			if p, ok := t.Parameters[ref]; ok && p.Default != nil {
				fn.env[k] = fmt.Sprint(p.Default) // a stack parameter, deployed with its default
				continue
			}
			switch t.Resources[ref].Type {
			case "AWS::DynamoDB::Table":
				fn.env[k] = table
			case "AWS::S3::Bucket":
				fn.env[k] = bucket
			default:
				return nil, fmt.Errorf("environment %s: cannot resolve %v", k, v)
			}
		}
	}
	return fn, nil
}

// value resolves a property as CloudFormation does with the deploy's
// parameters: a literal, a Ref to a parameter, or Fn::If on a condition
// (Fn::Not, Fn::Equals and Fn::Or of values); set is false for AWS::NoValue.
func (t *template) value(v any) (out any, set bool, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, true, nil
	}
	if ref, ok := m["Ref"].(string); ok {
		if ref == "AWS::NoValue" {
			return nil, false, nil
		}
		p, ok := t.Parameters[ref]
		if !ok {
			return nil, false, fmt.Errorf("Ref %s is no parameter", ref)
		}
		return p.Default, true, nil
	}
	if args, ok := m["Fn::If"].([]any); ok && len(args) == 3 {
		name, _ := args[0].(string)
		holds, err := t.condition(t.Conditions[name])
		if err != nil {
			return nil, false, fmt.Errorf("condition %s: %w", name, err)
		}
		if holds {
			return t.value(args[1])
		}
		return t.value(args[2])
	}
	return nil, false, fmt.Errorf("%v is not emulated", v)
}

// condition evaluates a condition's expression.
func (t *template) condition(c any) (bool, error) {
	m, _ := c.(map[string]any)
	if args, ok := m["Fn::Not"].([]any); ok && len(args) == 1 {
		holds, err := t.condition(args[0])
		return !holds, err
	}
	if args, ok := m["Fn::Or"].([]any); ok {
		for _, a := range args {
			if holds, err := t.condition(a); err != nil || holds {
				return holds, err
			}
		}
		return false, nil
	}
	if args, ok := m["Fn::Equals"].([]any); ok && len(args) == 2 {
		x, _, err := t.value(args[0])
		if err != nil {
			return false, err
		}
		y, _, err := t.value(args[1])
		return fmt.Sprint(x) == fmt.Sprint(y), err
	}
	if name, ok := m["Condition"].(string); ok {
		return t.condition(t.Conditions[name])
	}
	return false, fmt.Errorf("%v is not emulated", c)
}

// httpRoutes reads the routes, integrations and authorizers of an HTTP API.
func (t *template) httpRoutes(a *api) error {
	authorizers := map[string]*authorizerSpec{}
	for id, r := range t.Resources {
		if r.Type != "AWS::ApiGatewayV2::Authorizer" {
			continue
		}
		p := r.Properties
		if p["AuthorizerType"] != "REQUEST" {
			return fmt.Errorf("authorizer %s: only REQUEST authorizers are emulated", id)
		}
		au := &authorizerSpec{id: id, payloadV2: p["AuthorizerPayloadFormatVersion"] == "2.0"}
		if !au.payloadV2 || p["EnableSimpleResponses"] != true {
			return fmt.Errorf("authorizer %s: only payload 2.0 with simple responses is emulated", id)
		}
		if au.function = a.functions[t.functionIn(p["AuthorizerUri"])]; au.function == nil {
			return fmt.Errorf("authorizer %s: no Lambda function", id)
		}
		sources, _ := p["IdentitySource"].([]any)
		for _, s := range sources {
			src, err := parseIdentitySource(fmt.Sprint(s))
			if err != nil {
				return fmt.Errorf("authorizer %s: %w", id, err)
			}
			au.sources = append(au.sources, src)
		}
		if n, ok := p["AuthorizerResultTtlInSeconds"].(float64); ok {
			au.ttl = time.Duration(n) * time.Second
		}
		authorizers[id] = au
	}
	for id, r := range t.Resources {
		if r.Type != "AWS::ApiGatewayV2::Route" {
			continue
		}
		p := r.Properties
		key, _ := p["RouteKey"].(string)
		method, path, ok := strings.Cut(key, " ")
		if !ok {
			return fmt.Errorf("route %s: route key %q", id, key)
		}
		rt := &route{key: key, method: method, path: path}
		rt.path, rt.greedy = strings.CutSuffix(path, "/{proxy+}")
		integration := t.Resources[t.refIn(p["Target"], "AWS::ApiGatewayV2::Integration")]
		if integration.Properties["IntegrationType"] != "AWS_PROXY" {
			return fmt.Errorf("route %s: not a Lambda proxy integration", id)
		}
		rt.payloadV2 = integration.Properties["PayloadFormatVersion"] == "2.0"
		if rt.function = a.functions[t.functionIn(integration.Properties["IntegrationUri"])]; rt.function == nil {
			return fmt.Errorf("route %s: no Lambda function", id)
		}
		switch p["AuthorizationType"] {
		case "NONE", nil:
		case "CUSTOM":
			ref, _ := p["AuthorizerId"].(map[string]any)
			if rt.authorizer = authorizers[fmt.Sprint(ref["Ref"])]; rt.authorizer == nil {
				return fmt.Errorf("route %s: unknown authorizer %v", id, p["AuthorizerId"])
			}
		default:
			return fmt.Errorf("route %s: authorization %v is not emulated", id, p["AuthorizationType"])
		}
		a.routes = append(a.routes, rt)
	}
	return nil
}

// restRoutes reads the resources, methods and authorizers of a REST API.
func (t *template) restRoutes(a *api) error {
	for _, r := range t.Resources {
		switch r.Type {
		case "AWS::ApiGateway::Stage":
			a.stage = "/" + fmt.Sprint(r.Properties["StageName"])
		case "AWS::ApiGateway::RestApi":
			for _, m := range asList(r.Properties["BinaryMediaTypes"]) {
				a.binaryMediaTypes = append(a.binaryMediaTypes, strings.ReplaceAll(fmt.Sprint(m), "~1", "/"))
			}
		}
	}
	if a.stage == "" {
		return fmt.Errorf("the REST API has no stage")
	}
	authorizers := map[string]*authorizerSpec{}
	for id, r := range t.Resources {
		if r.Type != "AWS::ApiGateway::Authorizer" {
			continue
		}
		p := r.Properties
		if p["Type"] != "REQUEST" {
			return fmt.Errorf("authorizer %s: only REQUEST authorizers are emulated", id)
		}
		au := &authorizerSpec{id: id, ttl: 300 * time.Second}
		if au.function = a.functions[t.functionIn(p["AuthorizerUri"])]; au.function == nil {
			return fmt.Errorf("authorizer %s: no Lambda function", id)
		}
		for s := range strings.SplitSeq(fmt.Sprint(p["IdentitySource"]), ",") {
			src, err := parseIdentitySource(s)
			if err != nil {
				return fmt.Errorf("authorizer %s: %w", id, err)
			}
			au.sources = append(au.sources, src)
		}
		if n, ok := p["AuthorizerResultTtlInSeconds"].(float64); ok {
			au.ttl = time.Duration(n) * time.Second
		}
		authorizers[id] = au
	}
	for id, r := range t.Resources {
		if r.Type != "AWS::ApiGateway::Method" {
			continue
		}
		p := r.Properties
		path, err := t.restPath(t.refIn(p["ResourceId"], "AWS::ApiGateway::Resource"))
		if err != nil {
			return fmt.Errorf("method %s: %w", id, err)
		}
		method := fmt.Sprint(p["HttpMethod"])
		rt := &route{key: method + " " + path, method: method}
		rt.path, rt.greedy = strings.CutSuffix(path, "/{proxy+}")
		integration, _ := p["Integration"].(map[string]any)
		if integration["Type"] != "AWS_PROXY" {
			return fmt.Errorf("method %s: not a Lambda proxy integration", id)
		}
		if rt.function = a.functions[t.functionIn(integration["Uri"])]; rt.function == nil {
			return fmt.Errorf("method %s: no Lambda function", id)
		}
		switch p["AuthorizationType"] {
		case "NONE", nil:
		case "CUSTOM":
			if rt.authorizer = authorizers[t.refIn(p["AuthorizerId"], "AWS::ApiGateway::Authorizer")]; rt.authorizer == nil {
				return fmt.Errorf("method %s: unknown authorizer %v", id, p["AuthorizerId"])
			}
		default:
			return fmt.Errorf("method %s: authorization %v is not emulated", id, p["AuthorizationType"])
		}
		a.routes = append(a.routes, rt)
	}
	return nil
}

// restPath is the full path of a REST API resource, from its path parts up to the root.
func (t *template) restPath(id string) (string, error) {
	var parts []string
	for range 64 {
		r, ok := t.Resources[id]
		if !ok || r.Type != "AWS::ApiGateway::Resource" {
			return "", fmt.Errorf("resource %q not found", id)
		}
		parts = append([]string{fmt.Sprint(r.Properties["PathPart"])}, parts...)
		parent, _ := r.Properties["ParentId"].(map[string]any)
		if _, root := parent["Fn::GetAtt"]; root {
			return "/" + strings.Join(parts, "/"), nil
		}
		id = fmt.Sprint(parent["Ref"])
	}
	return "", fmt.Errorf("resource %q: path too deep", id)
}

// functionIn finds the Lambda function that an ARN expression ({"Fn::GetAtt":
// [fn, "Arn"]}, possibly inside Fn::Join and Fn::Select) refers to.
func (t *template) functionIn(v any) string {
	switch v := v.(type) {
	case map[string]any:
		if att, ok := v["Fn::GetAtt"].([]any); ok && len(att) == 2 && att[1] == "Arn" {
			if id := fmt.Sprint(att[0]); t.Resources[id].Type == "AWS::Lambda::Function" {
				return id
			}
		}
		for _, x := range v {
			if id := t.functionIn(x); id != "" {
				return id
			}
		}
	case []any:
		for _, x := range v {
			if id := t.functionIn(x); id != "" {
				return id
			}
		}
	}
	return ""
}

// refIn finds a {"Ref": id} to a resource of type typ inside v.
func (t *template) refIn(v any, typ string) string {
	switch v := v.(type) {
	case map[string]any:
		if id, ok := v["Ref"].(string); ok && t.Resources[id].Type == typ {
			return id
		}
		for _, x := range v {
			if id := t.refIn(x, typ); id != "" {
				return id
			}
		}
	case []any:
		for _, x := range v {
			if id := t.refIn(x, typ); id != "" {
				return id
			}
		}
	}
	return ""
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// match finds the route of method and path as API Gateway does: an exact
// path before a greedy one, the longest greedy prefix first, a named method
// before ANY. proxy is the path below a greedy route's prefix.
func (a *api) match(method, path string) (rt *route, proxy string) {
	best := -1
	for _, r := range a.routes {
		if r.method != "ANY" && r.method != method {
			continue
		}
		var score int
		switch {
		case !r.greedy && (path == r.path || path == r.path+"/"):
			score = 1 << 20
		case !r.greedy && matchesVariables(r.path, path):
			score = 1 << 19 // API Gateway prefers literal paths, then paths with {variables}, then {proxy+}
		case r.greedy && strings.HasPrefix(path, r.path+"/") && len(path) > len(r.path)+1:
			score = len(r.path) << 1
		default:
			continue
		}
		if r.method != "ANY" {
			score++
		}
		if score > best {
			best, rt = score, r
			if r.greedy {
				proxy = path[len(r.path)+1:]
			} else {
				proxy = ""
			}
		}
	}
	return rt, proxy
}

// matchesVariables reports whether path matches pattern, whose {name}
// segments each match one segment.
func matchesVariables(pattern, path string) bool {
	want, got := strings.Split(pattern, "/"), strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(want) != len(got) || !strings.Contains(pattern, "{") {
		return false
	}
	for i, w := range want {
		variable := strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}")
		if variable && got[i] == "" || !variable && w != got[i] {
			return false
		}
	}
	return true
}
