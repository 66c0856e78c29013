package templates

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/nodes"
)

// InterfaceValidation is Ironic's answer of node validation for one driver
// interface: Result true when it is valid, false when it is not (Reason says
// why), nil when the node does not support the interface and nothing needs it.
type InterfaceValidation struct {
	Result *bool   `json:"result"`
	Reason *string `json:"reason"`
}

// notSupported is Ironic's reason for an interface a node does not support.
const notSupported = "not supported"

// Validate checks node n as Ironic's GET /nodes/{id}/validate does for deploy
// templates (spec 003: "the validation of the node must fail if any of the
// enabled Deploy Templates are not supported on that node"): every step of
// every template its traits enable must be among the steps the node supports
// (nodes.Node.Interfaces). Steps a template disables (priority 0) need no
// support: they never run. The answer has one entry per deploy step interface.
func (s *Service) Validate(ctx context.Context, n nodes.Node) (map[string]InterfaceValidation, error) {
	// Only well-formed trait names can be template names.
	named := slices.DeleteFunc(slices.Clone(n.Traits), func(t string) bool { return nodes.CheckTrait(t) != nil })
	enabled, err := s.ByNames(ctx, named)
	if err != nil {
		return nil, err
	}
	unsupported := map[string][]string{} // interface -> what needs it in vain
	for _, name := range slices.Sorted(maps.Keys(enabled)) {
		for _, st := range enabled[name].Steps {
			if st.Priority > 0 && !n.Supports(st.Interface, st.Step) {
				unsupported[st.Interface] = append(unsupported[st.Interface],
					fmt.Sprintf("deploy template %s: step %s is not supported by the node", name, st.Name()))
			}
		}
	}
	out := make(map[string]InterfaceValidation, len(Interfaces))
	valid, invalid := true, false
	for _, iface := range Interfaces {
		_, listed := n.Interfaces[iface]
		switch problems := unsupported[iface]; {
		case len(problems) > 0:
			reason := strings.Join(problems, "; ")
			out[iface] = InterfaceValidation{Result: &invalid, Reason: &reason}
		case n.Interfaces != nil && !listed:
			reason := notSupported
			out[iface] = InterfaceValidation{Reason: &reason}
		default:
			out[iface] = InterfaceValidation{Result: &valid}
		}
	}
	return out, nil
}
