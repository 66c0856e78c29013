package planner

import (
	"encoding/json"
	"strconv"
	"strings"
)

// FaultToleranceGroup is a group task's nodes and how many of them may fail
// before the run stops (Nailgun's fault_tolerance_groups, which Astute ran).
// A node in no group is critical: its failure stops the run.
type FaultToleranceGroup struct {
	Name           string   `json:"name"`
	Nodes          []string `json:"node_ids"`
	FaultTolerance int      `json:"fault_tolerance"`
}

// faultToleranceGroups lists, for each group task placed on some node, its
// nodes and its tolerance (TransactionSerializer.expand_tasks).
func faultToleranceGroups(tasks []Task, p *placement) []FaultToleranceGroup {
	var groups []FaultToleranceGroup
	for i, t := range tasks {
		on, ok := p.groupNodes[i]
		if !ok {
			continue
		}
		var nodes []string
		for n, yes := range on {
			if yes {
				nodes = append(nodes, p.nodes[n].ID)
			}
		}
		if len(nodes) > 0 {
			groups = append(groups, FaultToleranceGroup{Name: t.ID, Nodes: nodes, FaultTolerance: faultTolerance(t.Extra["fault_tolerance"], len(nodes))})
		}
	}
	return groups
}

// faultTolerance is Nailgun's calculate_fault_tolerance: how many of total
// nodes may fail given a group's fault_tolerance, a number or "N%" of total;
// a negative one is how many must succeed. Absent or unreadable, any number
// may fail (total+1).
func faultTolerance(raw json.RawMessage, total int) int {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return total + 1
	}
	var n int
	switch x := v.(type) {
	case float64:
		n = int(x)
	case string:
		s := strings.TrimSpace(x)
		pct, isPct := strings.CutSuffix(s, "%")
		if isPct {
			s = pct
		}
		i, err := strconv.Atoi(s)
		if err != nil {
			return total + 1
		}
		n = i
		if isPct {
			n = floorDiv(i*total, 100)
		}
	default:
		return total + 1
	}
	if n < 0 {
		n = max(0, total+n)
	}
	return n
}

// floorDiv is Python's // on integers.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
