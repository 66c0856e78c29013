package configdb

// snapshotKey is the key load keeps the snapshot of ref under.
func snapshotKey(ref DocRef, version int, vk Kind) string {
	return string(appendSnapshotKey(nil, ref, version, vk))
}
