// Package client is the Go client of the tuningbox API: the one way Go code
// (the tuningbox CLI, the graph agent, the black-box tests, your programs)
// talks to a tuningbox server.
//
// A Client is made by New from the server's base URL and options: Basic auth
// or a token, a client certificate, a CA to trust, a microversion
// (OpenStack-API-Version), a timeout. Its methods are grouped as the API is:
// ConfigDB entities and documents, nodes, deployment graphs and their
// transactions, deploy templates, resource overrides, users and tokens. Each
// sends one request and decodes the answer into the API's wire types
// (shared/wire), the same types the server's handlers answer with; the agent's
// Claim, TaskReport and Plan are still the graphs domain's types.
//
// Every answer outside 2xx (and 304) is an *Error carrying the status and the
// server's message; errors.Is matches it against the kind sentinels, which
// mirror the server's error kinds one to one:
//
//	if errors.Is(err, client.ErrNotFound) { ... }
//
// Nothing here retries on its own: a caller that wants to retry decides which
// errors are worth it (see IsTemporary) and uses the shared retry policy.
package client
