package routes

// id is an entity's identity in answers: the legacy integer before
// microversion 1.2, the UUID from it on.
var id = object{"type": []string{"integer", "string"}}

// schemas are the document's component schemas (JSON Schema 2020-12). The
// ConfigDB's entities are described field by field; the other groups' answers
// by their top-level type, which their own packages' tests pin in detail.
var schemas = map[string]any{
	"Error": object{
		"type": "object", "required": []string{"error"}, "additionalProperties": false,
		"properties": object{"error": object{
			"type": "object", "required": []string{"code", "message"}, "additionalProperties": false,
			"properties": object{"code": object{"type": "integer", "minimum": 400, "maximum": 599}, "message": object{"type": "string"}},
		}},
	},
	"Versions": object{
		"type": "object", "required": []string{"version"},
		"properties": object{"version": object{
			"type": "object", "required": []string{"id", "status", "min_version", "version"},
			"properties": object{
				"id": object{"type": "string"}, "status": object{"type": "string"},
				"min_version": object{"type": "string", "pattern": `^\d+\.\d+$`}, "version": object{"type": "string", "pattern": `^\d+\.\d+$`},
			},
		}},
	},
	"OpenAPI": object{"type": "object", "required": []string{"openapi", "info", "paths"}},
	"Component": object{
		"type": "object", "required": []string{"id", "name", "resource_definitions"},
		"properties": object{
			"id": id, "uuid": object{"type": "string"}, "name": object{"type": "string"},
			"resource_definitions": object{"type": "array", "items": ref("ResourceDefinition")},
			"created_at":           object{"type": "string", "format": "date-time"},
			"updated_at":           object{"type": "string", "format": "date-time"},
		},
	},
	"Components": object{"type": "array", "items": ref("Component")},
	"NewComponent": object{
		"type": "object",
		"properties": object{
			"name":                 object{"type": "string"},
			"resource_definitions": object{"type": "array", "items": object{"type": "object"}},
		},
	},
	"ResourceDefinition": object{
		"type": "object", "required": []string{"id", "name", "component_id", "content"},
		"properties": object{
			"id": id, "uuid": object{"type": "string"}, "name": object{"type": "string"},
			"component_id": object{"type": []string{"integer", "string", "null"}}, "content": true,
		},
	},
	"ResourceDefinitions": object{"type": "array", "items": ref("ResourceDefinition")},
	"Environment": object{
		"type": "object", "required": []string{"id", "components", "hierarchy_levels"},
		"properties": object{
			"id": id, "uuid": object{"type": "string"},
			"components":       object{"type": "array", "items": id},
			"hierarchy_levels": object{"type": "array", "items": object{"type": "string"}},
		},
	},
	"Environments": object{"type": "array", "items": ref("Environment")},
	"HierarchyLevel": object{
		"type": "object", "required": []string{"id", "name", "environment_id", "parent", "values"},
		"properties": object{
			"id": id, "uuid": object{"type": "string"}, "name": object{"type": "string"}, "environment_id": id,
			"parent": object{"type": []string{"integer", "string", "null"}},
			"values": object{"type": []string{"array", "null"}, "items": object{"type": "string"}},
		},
	},
	"HierarchyLevels": object{"type": "array", "items": ref("HierarchyLevel")},
	"Object":          object{"type": "object"},
	"Array":           object{"type": "array"},
	"Any":             object{"description": "Any JSON value: a document is what its writer stored."},
	"Text":            object{"type": "string"},
}
