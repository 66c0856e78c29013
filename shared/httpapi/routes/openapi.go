package routes

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// OpenAPIVersion is the OpenAPI version of Document.
const OpenAPIVersion = "3.1.0"

// MultiSegmentExtension marks a path parameter that spans several segments
// ({rest...} in the table): OpenAPI has no such parameter, so the document
// names it once ({rest}) and says so here; its value keeps its "/".
const MultiSegmentExtension = "x-tuningbox-multi-segment"

// TrailingSlashExtension marks an operation also served with a trailing slash.
const TrailingSlashExtension = "x-tuningbox-trailing-slash"

// LevelPathExtension marks a document operation, whose path is written at
// the global level: a level path may come before resources/ (levelPathDescription).
const LevelPathExtension = "x-tuningbox-level-path"

// levelPathDescription explains the path of a document operation.
const levelPathDescription = "A ConfigDB document (spec 000). The path is written at the global level, " +
	"/api/v1/config/environments/{env}/resources/{resource}/...: the environment-wide document. " +
	"Before resources/ a level path names a narrower level: {level}/{value} pairs of the environment's " +
	"hierarchy levels, from the broadest down, such as the node short path " +
	"/api/v1/config/environments/{env}/nodes/{node}/resources/{resource}/values (spec 000; {node} is the " +
	"node's id, UUID or FQDN), or a whole placement, role/controller/nodes/node-1/resources/... " +
	"A node's credentials read the documents of its own placement only. An effective read merges the " +
	"documents of every level from the global one down to the path, the narrower winning."

// Document is the OpenAPI document of Table, as served (JSON). It is built
// at its first use, not at start-up: generating the schemas costs a Lambda's
// cold start ~15 ms that only GET /api/v1/openapi.json needs.
var Document = sync.OnceValue(func() []byte {
	b, err := json.Marshal(document())
	if err != nil {
		panic("routes: the OpenAPI document does not encode: " + err.Error())
	}
	return b
})

// OpenAPIPath is the document's form of a table path: {name...} becomes {name}.
func OpenAPIPath(path string) string { return strings.ReplaceAll(path, "...}", "}") }

type object = map[string]any

func document() object {
	paths := object{}
	for _, r := range Table {
		item, _ := paths[OpenAPIPath(r.Path)].(object)
		if item == nil {
			item = object{}
			paths[OpenAPIPath(r.Path)] = item
		}
		item[strings.ToLower(r.Method)] = operation(r)
	}
	return object{
		"openapi": OpenAPIVersion,
		"info": object{
			"title":   "tuningbox",
			"version": httpapi.MaxVersion.String(),
			"description": "tuningbox's HTTP API: the ConfigDB (spec 000), Puppet resource overrides (001), deployment graphs (002), " +
				"deploy templates (003), with UUIDs and microversions (004). info.version is the newest microversion " +
				"(header OpenStack-API-Version: config X.Y). Every route needs credentials (HTTP Basic or a Bearer API token) " +
				"except those whose security is empty. A parameter with " + MultiSegmentExtension + " spans several path segments. " +
				"Unknown query parameters are refused (400).",
		},
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"servers":           []object{{"url": "/"}},
		"security":          []object{{"basic": []string{}}, {"bearer": []string{}}},
		"paths":             paths,
		"components": object{
			"securitySchemes": object{
				"basic":  object{"type": "http", "scheme": "basic"},
				"bearer": object{"type": "http", "scheme": "bearer", "description": "An API token (POST /api/v1/tokens)."},
			},
			"schemas":   schemas,
			"responses": object{"Error": object{"description": "An error.", "content": jsonContent("Error"), "headers": requestIDHeader}},
			"headers": object{"RequestId": object{
				"description": "The request's id: API Gateway's on AWS, else req-<uuid>. Its audit record, log line and the document version it wrote name it too.",
				"schema":      object{"type": "string"},
			}},
		},
	}
}

func ref(schema string) object { return object{"$ref": "#/components/schemas/" + schema} }

// requestIDHeader is every answer's header that names its request.
var requestIDHeader = object{httpapi.RequestIDHeader: object{"$ref": "#/components/headers/RequestId"}}

func jsonContent(schema string) object {
	return object{"application/json": object{"schema": ref(schema)}}
}

func operation(r Route) object {
	op := object{
		"operationId":        r.ID,
		"summary":            r.Summary,
		"tags":               []string{r.Group},
		"x-tuningbox-access": r.Access.String(),
	}
	if r.Node != NodeNone {
		op["x-tuningbox-node"] = r.Node.String()
	}
	if r.Slash {
		op[TrailingSlashExtension] = true
	}
	if r.EmbeddedOnly {
		op[EmbeddedOnlyExtension] = true
	}
	if r.Since != (httpapi.Version{}) {
		op["x-tuningbox-since"] = r.Since.String()
		op["description"] = "From microversion " + r.Since.String() + "."
	}
	if r.Levels {
		op[LevelPathExtension] = true
		op["description"] = levelPathDescription
	}
	if r.Access == Public {
		op["security"] = []object{}
	}
	var params []object
	for _, name := range r.pathParams() {
		p := object{"name": name, "in": "path", "required": true, "schema": object{"type": "string"}}
		if strings.Contains(r.Path, "{"+name+"...}") {
			p["description"] = "The rest of the path: several segments separated by \"/\" (not escaped)."
			p[MultiSegmentExtension] = true
		}
		switch {
		case r.Levels && name == "resource":
			p["description"] = "The resource definition: its name (which may contain \"/\", such as override/plugins), id or UUID."
		case r.Levels && name == "kind":
			p["description"] = "The document: values, or overrides (spec 000 also writes it override)."
			p["schema"] = object{"type": "string", "enum": documentKinds}
		}
		params = append(params, p)
	}
	for _, q := range r.Query {
		p := queryParam(q)
		if q.Name == r.When {
			p["required"] = true // what takes a request to this operation
		}
		params = append(params, p)
	}
	if params != nil {
		op["parameters"] = params
	}
	if r.Request != "" {
		content := jsonContent(r.Request)
		for _, t := range r.RequestTypes {
			content[t] = object{"schema": ref(r.Request)}
		}
		op["requestBody"] = object{"required": true, "content": content}
	}
	responses := object{"default": object{"$ref": "#/components/responses/Error"}}
	for _, status := range r.successStatuses() {
		resp := object{"description": http.StatusText(status), "headers": requestIDHeader}
		if status != http.StatusNoContent && r.Response != "" {
			contentType := r.ContentType
			if contentType == "" {
				contentType = "application/json"
			}
			resp["content"] = object{contentType: object{"schema": ref(r.Response)}}
		}
		responses[strconv.Itoa(status)] = resp
	}
	op["responses"] = responses
	return op
}

func queryParam(q Param) object {
	p := object{"name": q.Name, "in": "query", "description": q.Description}
	if q.Since != (httpapi.Version{}) {
		p["description"] = "From microversion " + q.Since.String() + " (refused below it): " + q.Description
		p["x-tuningbox-since"] = q.Since.String()
	}
	switch q.Type {
	case Flag:
		// Present without a value means true (tuning-box's ?effective).
		p["schema"] = object{"type": "string", "pattern": flagPattern}
		p["allowEmptyValue"] = true
		p["x-tuningbox-flag"] = true
	case Integer:
		p["schema"] = object{"type": "integer", "minimum": 1}
	case Seconds:
		p["schema"] = object{"type": "number"}
	case DateTime:
		p["schema"] = object{"type": "string", "format": "date-time"}
	default:
		p["schema"] = object{"type": "string"}
	}
	return p
}

// ServeDocument answers GET /api/v1/openapi.json.
func ServeDocument(w http.ResponseWriter, _ *http.Request) {
	httpapi.RawJSON(w, http.StatusOK, Document())
}
