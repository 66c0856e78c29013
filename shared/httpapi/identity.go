package httpapi

import (
	"net/http"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// Identity and query rules of spec 004, shared by every group that follows them.

// UUIDIdentities reports whether r's microversion identifies entities by UUID only (1.2 and later).
func UUIDIdentities(r *http.Request) bool { return RequestVersion(r).AtLeast(V1_2) }

// CheckPathID checks the form of an id taken from a path or a marker, before
// any lookup: from 1.2 on it must be a UUID ("Invalid uuid X"); before, a
// UUID or a legacy integer id.
func CheckPathID(r *http.Request, id string) error {
	if ident.IsUUID(id) {
		return nil
	}
	if UUIDIdentities(r) {
		return errs.Invalidf("Invalid uuid %s", id)
	}
	if !ident.IsIntegerID(id) || id[0] == '0' {
		return errs.Invalidf("Invalid id %s: expected an integer id or a UUID", id)
	}
	return nil
}
