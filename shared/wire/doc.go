// Package wire holds the request and answer bodies of tuningbox's HTTP API:
// one Go type per body, with the JSON tags that are its wire format. The
// server's handlers build and decode these types (converting from and to the
// domain packages' own structs in the handler packages; a domain type that is
// a body word for word, such as a document version, its writer, an API token
// or an audit record, is an alias of the wire type instead), the Go client in
// client/ sends and reads the same types, and the OpenAPI document's
// component schemas are generated from them (shared/httpapi/routes), so a
// body is written down once.
//
// The package depends on the standard library only, so that a client links
// none of the server's domain code.
//
// Microversions: an entity's "id" is its legacy integer id before 1.2 and its
// UUID from 1.2 on (ID holds either); a body that differs otherwise between
// versions says so on its fields.
//
// Besides json, a field's tags say what its Go type cannot tell the schema
// generator (shared/httpapi/routes/schemagen): enum:"a,b", format, pattern,
// minimum, maximum, nullable:"true" (null is a value the field takes),
// jsontype:"string,integer" (the JSON types the field takes), anyjson:"..."
// (the field holds any JSON: what it is) and schema:"[]Name" (a raw field
// that holds a list of the component Name). An answer's fields without
// omitempty are required.
package wire
