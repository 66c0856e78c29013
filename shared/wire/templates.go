package wire

import (
	"encoding/json"
	"time"
)

// Step is one deploy step of a template, of an environment's defaults or of
// a node's plan.
type Step struct {
	Interface string          `json:"interface"`
	Step      string          `json:"step"`
	Args      json.RawMessage `json:"args" anyjson:"the step's arguments (an object); secret ones are masked in answers"`
	Priority  int             `json:"priority"`
}

// Template is a deploy template with every attribute (microversion 1.1 on):
// a trait name mapped to deploy steps. Its fields are in the order the API
// has always written them (by name).
type Template struct {
	CreatedAt time.Time       `json:"created_at"`
	Extra     json.RawMessage `json:"extra" anyjson:"free-form metadata, an object"`
	Links     []Link          `json:"links"`
	Name      string          `json:"name"`
	Steps     []Step          `json:"steps"`
	UpdatedAt *time.Time      `json:"updated_at"`
	UUID      string          `json:"uuid"`
}

// TemplateAttributes is a template with only the attributes asked for
// (?fields=; uuid, name and links in a listing without ?detail), by name:
// a subset of Template's.
type TemplateAttributes = map[string]any

// TemplateList is a page of templates; Next is the next page's path when the page is full.
type TemplateList struct {
	Templates []TemplateAttributes `json:"deploy_templates" schema:"[]TemplateSubset"`
	Next      string               `json:"next,omitempty"`
}

// NewTemplate creates a template; UUID empty lets the server choose.
type NewTemplate struct {
	Name  string          `json:"name"`
	Steps json.RawMessage `json:"steps" schema:"[]Step"`
	UUID  string          `json:"uuid,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty" anyjson:"free-form metadata, an object"`
}

// PatchOp is one JSON Patch (RFC 6902) operation.
type PatchOp struct {
	Op    string `json:"op" enum:"add,remove,replace,move,copy,test"`
	Path  string `json:"path"`
	From  string `json:"from,omitempty"`
	Value any    `json:"value,omitempty" anyjson:"the value the operation writes or tests"`
}

// StepDefaults is an environment's default deploy steps (microversion 1.1 on).
type StepDefaults struct {
	// EnvironmentID follows the identity rule of the microversion.
	EnvironmentID ID     `json:"environment_id"`
	Steps         []Step `json:"steps"`
}

// NewStepDefaults replaces an environment's default deploy steps.
type NewStepDefaults struct {
	Steps json.RawMessage `json:"steps" schema:"[]Step"`
}

// StepsRequest asks for a node's deploy steps for an instance's traits.
type StepsRequest struct {
	InstanceTraits []string `json:"instance_traits"`
}

// DeploySteps is the ordered list of steps a deployment of a node runs.
type DeploySteps struct {
	DeploySteps []Step `json:"deploy_steps"`
}

// InterfaceValidation is one driver interface's result of a node's
// validation (Ironic's shape): result true, false, or null with a reason.
type InterfaceValidation struct {
	Result *bool   `json:"result"`
	Reason *string `json:"reason"`
}

// NodeValidation is a node's validation by driver interface name.
type NodeValidation = map[string]InterfaceValidation
