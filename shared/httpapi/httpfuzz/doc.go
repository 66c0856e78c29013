// Package httpfuzz holds fuzz targets that drive the whole HTTP API — the auth
// middleware, the ConfigDB level-path router and the key-path parser — through
// the handler `tuningbox serve` builds, with committed seed corpora in
// testdata/fuzz. Run one with `go test -fuzz FuzzLevelPaths ./shared/httpapi/httpfuzz`;
// `make fuzz` runs every fuzz target of the tree for a short while.
package httpfuzz
