package configapi

import (
	"net/http"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// docRef reads the document a document route names (the level matcher of
// routes has read its environment, level path, kind and resource name):
//
//	/environments/{env}/{lvl}/{val}/.../resources/{id, UUID or name...}/{values|overrides|override}[/versions | /keys/{set|delete}]
//
// The level path is read on the escaped path, so that an escaped "/" inside a
// level value stays inside it.
func docRef(r *http.Request) (configdb.DocRef, configdb.Kind, error) {
	m, _ := routes.MatchOf(r)
	v := idsFor(r)
	ref := configdb.DocRef{Env: m.Values["env"], Levels: m.Levels, Resource: m.Values["resource"]}
	if err := v.pathRef(ref.Env, false); err != nil {
		return configdb.DocRef{}, "", err
	}
	kind, ok := configdb.ParseKind(m.Values["kind"])
	if !ok {
		return configdb.DocRef{}, "", errs.NotFoundf("expected .../resources/<resource>/values or /overrides")
	}
	return ref, kind, v.pathRef(ref.Resource, true)
}

func (h *handlers) listVersions(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, kind, err := docRef(r)
	if err != nil {
		return 0, nil, err
	}
	versions, err := h.svc.ListVersions(r.Context(), ref, kind)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, versions, nil
}

// keyHistory lists the versions of a document in which a key's value changed.
func (h *handlers) keyHistory(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, kind, err := docRef(r)
	if err != nil {
		return 0, nil, err
	}
	q := routes.QueryOf(r)
	key := q.String("key")
	var page configdb.HistoryPage
	page.Before, _ = q.Integer("before")
	page.Limit, _ = q.Integer("limit")
	hist, err := h.svc.History(r.Context(), ref, kind, key, page)
	if err != nil {
		return 0, nil, err
	}
	out := wire.KeyHistory{Key: key, Changes: make([]wire.KeyChange, len(hist.Changes)), Before: hist.Before}
	for i, c := range hist.Changes {
		change := "changed"
		switch {
		case c.Old == nil:
			change = "added"
		case c.New == nil:
			change = "removed"
		}
		out.Changes[i] = wire.KeyChange{Version: c.Version.Version, CreatedAt: c.CreatedAt, WrittenBy: c.WrittenBy, Change: change, Old: c.Old, New: c.New}
	}
	return http.StatusOK, out, nil
}

// getDocument reads a document: as stored, or effective (?effective).
func (h *handlers) getDocument(w http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, kind, err := docRef(r)
	if err != nil {
		return 0, nil, err
	}
	q := routes.QueryOf(r)
	rq := configdb.ReadQuery{
		DocRef:     ref,
		Kind:       kind,
		Effective:  q.Flag("effective"),
		ShowLookup: q.Flag("show_lookup"),
		Key:        q.String("key"),
		Explain:    q.Flag("explain"),
		AsOf:       q.Time("as_of"),
	}
	rq.Version, _ = q.Integer("version")
	if rq.Merge, err = configdb.ParseMergeMode(q.String("merge")); err != nil {
		return 0, nil, err
	}
	wait, err := waitFor(q)
	if err != nil {
		return 0, nil, err
	}
	var doc *configdb.Document
	inm := r.Header.Get("If-None-Match")
	if wait > 0 && inm != "" {
		doc, err = h.svc.Wait(r.Context(), rq, inm, wait)
	} else {
		doc, err = h.svc.Read(r.Context(), rq)
	}
	if err != nil {
		return 0, nil, err
	}
	// Set by their canonical keys: Header.Set would canonicalize them and
	// make a new value slice on every read.
	header := w.Header()
	header["Etag"] = []string{doc.ETag}
	header["Cache-Control"] = noCache
	if inm != "" && configdb.ETagMatches(inm, doc.ETag) {
		return http.StatusNotModified, nil, nil
	}
	return http.StatusOK, h.compressed.Body(doc.ETag, doc.Body), nil
}

// noCache is the Cache-Control value of every document answer, one slice
// shared by all of them: nothing writes into a header's value slice (Add
// appends to this full one, which copies it; Del drops the key).
var noCache = []string{"no-cache"}

func (h *handlers) putDocument(w http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, kind, err := docRef(r)
	if err != nil {
		return 0, nil, err
	}
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return 0, nil, err
	}
	if IsDryRun(r) {
		p, err := h.svc.PreviewPut(r.Context(), ref, kind, body, r.Header.Get("If-Match"))
		return previewed(r, p, err)
	}
	v, err := h.svc.PutDocument(r.Context(), ref, kind, body, r.Header.Get("If-Match"))
	return stored(w, v, err)
}

// editKeys sets (set) or deletes the keys of a document: …/keys/set, …/keys/delete.
func (h *handlers) editKeys(set bool) httpapi.Handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ref, kind, err := docRef(r)
		if err != nil {
			return 0, nil, err
		}
		var ops []configdb.KeyOp
		if err := httpapi.Decode(r, &ops); err != nil {
			return 0, nil, err
		}
		edit := keyEdit(r, set)
		if IsDryRun(r) {
			p, err := h.svc.PreviewKeys(r.Context(), ref, kind, edit, ops, r.Header.Get("If-Match"))
			return previewed(r, p, err)
		}
		v, err := h.svc.EditKeys(r.Context(), ref, kind, edit, ops, r.Header.Get("If-Match"))
		return stored(w, v, err)
	}
}

// keyEdit is what a keys batch does at r's microversion: keys/set creates the
// objects missing on a key's path from 1.4 on; before, as in tuning-box, every
// key but the last must exist.
func keyEdit(r *http.Request, set bool) configdb.KeyEdit {
	switch {
	case !set:
		return configdb.DeleteKey
	case httpapi.RequestVersion(r).AtLeast(httpapi.V1_4):
		return configdb.SetKeyCreatingPath
	default:
		return configdb.SetKey
	}
}

// VersionHeader carries the version number a write created.
const VersionHeader = "X-Config-Version"

// stored answers a document write: 204 with the new document's ETag and version number.
func stored(w http.ResponseWriter, v configdb.Version, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("ETag", strconv.Quote(v.SHA256))
	w.Header().Set(VersionHeader, strconv.Itoa(v.Version))
	return http.StatusNoContent, nil, nil
}
