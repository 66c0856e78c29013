package graphs

import (
	"fmt"
	"slices"
)

// stopReason says why a run stops once node has failed, given every node
// failed so far: a group lost more nodes than it tolerates, or node is in no
// group (critical). "" when the run goes on.
func (p *frozenPlan) stopReason(failed []string, node string) string {
	inGroup := false
	for _, g := range p.Groups {
		if !slices.Contains(g.Nodes, node) {
			continue
		}
		inGroup = true
		lost := 0
		for _, n := range g.Nodes {
			if slices.Contains(failed, n) {
				lost++
			}
		}
		if lost > g.FaultTolerance {
			return fmt.Sprintf("group %s lost %d of its %d nodes and tolerates %d", g.Name, lost, len(g.Nodes), g.FaultTolerance)
		}
	}
	if !inGroup {
		return fmt.Sprintf("node %s is in no fault-tolerance group: it is critical", node)
	}
	return ""
}
