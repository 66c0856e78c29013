package yaql

import (
	"reflect"
	"sync"
	"unsafe"
)

// Cache remembers what depends only on the content of the documents: the sorted keys of
// their dicts, whether two dicts are equal, lists of dicts indexed by a key (for
// where($.uid = new($.uid))), and the results of the closed parts of
// expressions (a method chain such as $.network_metadata.nodes.values().where(...).network_roles
// whose lambdas see nothing but their item, or the node's data through new() and old()),
// keyed by the identity of the dicts and lists they start from. One Cache shared by the
// evaluations of a plan turns the work over data that the nodes' documents share (the same
// map objects, old and new) into one evaluation. The documents must not be modified while
// the Cache is in use; it is safe for concurrent use.
//
// A Cache keeps at most DefaultCacheValues values (what the results it keeps made, the
// items of its sorted keys and indexes): past that it remembers nothing more, so the
// evaluations of a plan cannot keep more than that between them.
type Cache struct {
	mu      sync.RWMutex
	results map[memoKey]memoEntry
	keys    map[unsafe.Pointer]sortedEntry
	equals  map[equalKey]equalEntry
	indexes map[memoKey]indexEntry
	kept    int // values held, at most DefaultCacheValues
}

// DefaultCacheValues bounds what a Cache keeps, as one evaluation's values: fuel-library's
// default graph planned on 1,000 nodes keeps 1,236 (a first run) to 4,521 (a re-run).
const DefaultCacheValues = DefaultValues

// NewCache returns an empty Cache (its maps are made on first use: an evaluation without
// a Cache of its own makes one that often stays empty).
func NewCache() *Cache { return &Cache{} }

// keep reserves room for n more values; false when the Cache is full. The caller holds mu.
func (c *Cache) keep(n int) bool {
	if c.kept+n > DefaultCacheValues {
		return false
	}
	c.kept += n
	return true
}

// rememberedEqualLen is the size from which the Cache remembers that two dicts are equal
// (or not): comparing two documents' network_metadata again for every condition of every
// node is most of a plan's work when that data changed.
const rememberedEqualLen = 16

type equalKey struct {
	a, b      unsafe.Pointer
	finalized bool
}

// equalEntry keeps both dicts alive, so their addresses are not reused meanwhile.
type equalEntry struct {
	a, b  map[string]any
	equal bool
}

// equalMaps is equalMaps(x, y, ...), remembered.
func (c *Cache) equalMaps(x, y map[string]any, finalized bool, m *meter) bool {
	key := equalKey{a: reflect.ValueOf(x).UnsafePointer(), b: reflect.ValueOf(y).UnsafePointer(), finalized: finalized}
	c.mu.RLock()
	e, found := c.equals[key]
	c.mu.RUnlock()
	if found {
		return e.equal
	}
	same := equalMaps(x, y, finalized, m)
	if m.spent() { // the comparison stopped short: same is no answer
		return same
	}
	c.mu.Lock()
	if c.equals == nil {
		c.equals = map[equalKey]equalEntry{}
	}
	if c.keep(1) {
		c.equals[key] = equalEntry{a: x, b: y, equal: same}
	}
	c.mu.Unlock()
	return same
}

type memoKey struct {
	n   node
	ptr unsafe.Pointer
	len int
	// new and old are the identities of the node's data for a chain whose lambdas call
	// new(), old() or changed(); nil for a closed one.
	new, old unsafe.Pointer
}

// memoEntry keeps the receiver alive, so its address is not reused by another value while
// the entry exists.
type memoEntry struct {
	recv, result any
}

type sortedEntry struct {
	m    map[string]any
	keys []string
}

// identity is a key for the dict or list v is, or false when v has none (scalars, empty).
func identity(v any) (unsafe.Pointer, int, bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return nil, 0, false
		}
		return reflect.ValueOf(x).UnsafePointer(), -1, true
	case []any:
		if len(x) == 0 {
			return nil, 0, false
		}
		return unsafe.Pointer(&x[0]), len(x), true
	case *iterator:
		return unsafe.Pointer(x), -2, true
	case *set:
		return unsafe.Pointer(x), -3, true
	}
	return nil, 0, false
}

func (c *Cache) lookup(key memoKey, recv any) (result any, _ memoKey, ok bool) {
	ptr, length, has := identity(recv)
	if !has {
		return nil, memoKey{}, false
	}
	key.ptr, key.len = ptr, length
	c.mu.RLock()
	e, found := c.results[key]
	c.mu.RUnlock()
	return e.result, key, found
}

// store keeps result for key; values is what making it and its receiver made.
func (c *Cache) store(key memoKey, recv, result any, values int) {
	if key.ptr == nil {
		return
	}
	c.mu.Lock()
	if c.results == nil {
		c.results = map[memoKey]memoEntry{}
	}
	if c.keep(values + 1) {
		c.results[key] = memoEntry{recv: recv, result: result}
	}
	c.mu.Unlock()
}

// sortedKeys is sortedKeys(m), remembered.
func (c *Cache) sortedKeys(m map[string]any) []string {
	if len(m) < 8 { // sorting a few keys is cheaper than the lookup
		return sortedKeys(m)
	}
	ptr := reflect.ValueOf(m).UnsafePointer()
	c.mu.RLock()
	e, found := c.keys[ptr]
	c.mu.RUnlock()
	if found {
		return e.keys
	}
	keys := sortedKeys(m)
	c.mu.Lock()
	if c.keys == nil {
		c.keys = map[unsafe.Pointer]sortedEntry{}
	}
	if c.keep(len(keys)) {
		c.keys[ptr] = sortedEntry{m: m, keys: keys}
	}
	c.mu.Unlock()
	return keys
}

// size is how many items a collection holds (0 for anything else).
func size(v any) int {
	if m, ok := v.(map[string]any); ok {
		return len(m)
	}
	items, _ := listItems(v)
	return len(items)
}

// memoizable methods: their result depends only on the receiver and on lambdas, which see
// only their item.
var memoizable = map[string]bool{
	"values": true, "keys": true, "items": true, "where": true, "select": true,
	"any": true, "all": true, "flatten": true, "toSet": true, "len": true,
}

// closed reports whether n's value depends on nothing but its own `$` (no context
// variable, no new()/old()/changed()...); with data true, new() and the other functions of
// the node's data are allowed.
func closed(n node, data bool) bool {
	switch x := n.(type) {
	case *constNode, *keywordNode:
		return true
	case *varNode:
		return x.name == "" || x.name == "1"
	case *listNode:
		return allClosed(x.items, data)
	case *mapNode:
		return allClosed(x.pairs, data)
	case *pairNode:
		return closed(x.key, data) && closed(x.value, data)
	case *indexNode:
		return closed(x.recv, data) && allClosed(x.args, data)
	case *dotNode:
		return closed(x.recv, data) && closed(x.right, data)
	case *unaryNode:
		return closed(x.operand, data)
	case *binaryNode:
		return closed(x.left, data) && closed(x.right, data)
	case *callNode:
		return x.fn != nil && (data || !x.fn.env) && allClosed(x.args, data)
	}
	return false
}

func allClosed(nodes []node, data bool) bool {
	for _, n := range nodes {
		if !closed(n, data) {
			return false
		}
	}
	return true
}

// lookup is where($.key = value) where value is the same for every item (a constant, or
// new()/old() of closed arguments, as in Fuel's where($.uid = new($.uid))): the items
// whose key equals value, found through an index of the receiver by key, built once per
// receiver, instead of a pass over every item for every node.
type lookup struct {
	key   string
	value node
}

func lookupOf(predicate node) *lookup {
	eq, ok := predicate.(*binaryNode)
	if !ok || eq.op != "=" {
		return nil
	}
	left, ok := eq.left.(*dotNode)
	if !ok || left.elvis {
		return nil
	}
	dollar, ok := left.recv.(*varNode)
	key, isKeyword := left.right.(*keywordNode)
	if !ok || !isKeyword || (dollar.name != "" && dollar.name != "1") {
		return nil
	}
	switch v := eq.right.(type) {
	case *constNode:
	case *callNode:
		if (v.name != "new" && v.name != "old") || !v.closedArgs {
			return nil
		}
	default:
		return nil
	}
	return &lookup{key: key.name, value: eq.right}
}

// keyIndex groups the items of a list of dicts by the hash of their key's value.
type keyIndex map[uint64][]int

type indexEntry struct {
	recv  any
	index keyIndex
}

// find answers the where() from the index; ok is false when it cannot (an item that is
// not a dict, a receiver without identity), and the where() then evaluates its predicate
// item by item.
func (l *lookup) find(c call, items []any) (out any, ok bool, err error) {
	if len(items) == 0 {
		return nil, false, nil
	}
	recv := c.recv
	ptr, length, has := identity(recv)
	if !has {
		return nil, false, nil
	}
	key := memoKey{n: l.value, ptr: ptr, len: length}
	cache := c.ev.memo()
	cache.mu.RLock()
	entry, found := cache.indexes[key]
	cache.mu.RUnlock()
	if !found {
		index := keyIndex{}
		for i, item := range items {
			d, isDict := item.(map[string]any)
			if !isDict {
				return nil, false, nil
			}
			c.ev.steps += hashSteps(d[l.key])
			if c.ev.spent() {
				return nil, true, c.ev.checkSteps()
			}
			h := hashOf(d[l.key])
			index[h] = append(index[h], i)
		}
		entry = indexEntry{recv: recv, index: index}
		cache.mu.Lock()
		if cache.indexes == nil {
			cache.indexes = map[memoKey]indexEntry{}
		}
		if cache.keep(2 * len(items)) { // the index, and the receiver it keeps
			cache.indexes[key] = entry
		}
		cache.mu.Unlock()
	}
	value, err := c.apply(l.value, nil)
	if err != nil {
		return nil, true, err
	}
	c.ev.steps += hashSteps(value)
	var matched []any
	for _, i := range entry.index[hashOf(value)] {
		item := items[i]
		if equal(item.(map[string]any)[l.key], value, false, &c.ev.meter) {
			matched = append(matched, item)
		}
	}
	if err := c.ev.checkSteps(); err != nil {
		return nil, true, err
	}
	return &iterator{items: matched}, true, c.ev.alloc(len(matched) + 1)
}
