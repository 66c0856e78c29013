// Package planner is the pure part of deployment graphs (spec 002): tasks
// (their parsing and validation), the order of a graph (Deps; it and the
// order across nodes share one topological sort), and the plan of one graph
// on a cluster's nodes (Plan): which tasks each node takes, by the release's
// role and tag metadata (Rules) and the conditions yaql evaluates on each
// node's data, and each node's steps with the waits its cross dependencies
// make on other nodes. It also renders a task's body for a node (Task.Body)
// and a graph in DOT.
//
// It reads nothing but its arguments: no store, no clock. Package graphs
// keeps the registry and the runs, reads a cluster's data for the planner
// and stores the plans it makes.
package planner
