package templates

import (
	"context"
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// patchableRoots are the attributes a JSON Patch may touch.
var patchableRoots = map[string]bool{"name": true, "steps": true, "extra": true}

// patchOptions apply RFC 6902 strictly: no negative array indices, removing a
// missing member fails, and add does not create missing parents.
var patchOptions = func() *jsonpatch.ApplyOptions {
	o := jsonpatch.NewApplyOptions()
	o.SupportNegativeIndices = false
	return o
}()

// Patch applies a JSON Patch (RFC 6902) to the template named by ident. Only
// add, replace and remove under /name, /steps and /extra are allowed; the
// operations apply in order and the resulting document is validated as a
// whole. Renaming onto an existing template's name is a conflict.
func (s *Service) Patch(ctx context.Context, ident string, patchDoc []byte) (Template, error) {
	patch, err := decodePatch(patchDoc)
	if err != nil {
		return Template{}, err
	}
	var out Template
	err = store.RetryConflicts(ctx, "patch deploy template "+ident, func() error {
		rec, rev, err := s.get(ctx, ident)
		if err != nil {
			return err
		}
		current := mustJSON(document{UUID: rec.UUID, Name: rec.Name, Steps: rec.Steps, Extra: rec.Extra})
		patched, err := patch.ApplyWithOptions(current, patchOptions)
		if err != nil {
			return errs.Wrap(errs.Invalid, err, "cannot apply patch: "+patchErrorText(err))
		}
		d, err := parseDocument(patched)
		if err != nil {
			return err
		}
		if jsonpatch.Equal(mustJSON(d), current) {
			out = rec.Template
			return nil
		}
		old := rec
		now := s.now()
		rec.Name, rec.Steps, rec.Extra, rec.UpdatedAt = d.Name, d.Steps, d.Extra, &now
		ops := []store.Op{store.Update(recordKey(rec.Seq), mustJSON(rec), rev)}
		if rec.Name != old.Name {
			ops = append(ops, store.Delete(nameKey(old.Name)), store.Create(nameKey(rec.Name), mustJSON(pointer{Seq: rec.Seq})))
		}
		err = s.idx.Write(ctx, ops...)
		if err == nil {
			out = rec.Template
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("update deploy template %s: %w", old.Name, err)
		}
		if rec.Name != old.Name && s.exists(ctx, nameKey(rec.Name)) {
			return errs.Conflictf("a deploy template with name %s already exists", rec.Name)
		}
		return err // the template changed under us: read it again and re-apply the patch
	})
	if err != nil {
		return Template{}, err
	}
	return out, nil
}

// decodePatch parses a JSON Patch and checks every operation's kind and path.
func decodePatch(doc []byte) (jsonpatch.Patch, error) {
	patch, err := jsonpatch.DecodePatch(doc)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "the body must be a JSON Patch: an array of operations")
	}
	if len(patch) == 0 {
		return nil, errs.Invalidf("the patch has no operations")
	}
	for i, op := range patch {
		switch kind := op.Kind(); kind {
		case "add", "replace", "remove":
		default:
			return nil, errs.Invalidf("operation %d: op %q is not supported; use add, replace or remove", i, kind)
		}
		path, err := op.Path()
		if err != nil || !strings.HasPrefix(path, "/") {
			return nil, errs.Invalidf("operation %d: path must be a JSON pointer such as /name", i)
		}
		root, _, _ := strings.Cut(path[1:], "/")
		root = strings.NewReplacer("~1", "/", "~0", "~").Replace(root)
		switch {
		case root == "uuid":
			return nil, errs.Invalidf("operation %d: /uuid cannot be changed", i)
		case !patchableRoots[root]:
			return nil, errs.Invalidf("operation %d: cannot patch /%s; only /name, /steps and /extra may be changed", i, root)
		}
	}
	return patch, nil
}

// patchErrorText describes why a patch did not apply, without the library's internals.
func patchErrorText(err error) string {
	switch {
	case errors.Is(err, jsonpatch.ErrInvalidIndex):
		return "an array index is out of range"
	case errors.Is(err, jsonpatch.ErrMissing):
		return "a path does not exist"
	default:
		return err.Error()
	}
}
