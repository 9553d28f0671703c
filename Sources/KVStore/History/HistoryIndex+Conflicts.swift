/// Conflicts in history (docs/sync.md § Conflicts): the mark on a version
/// that lost to a concurrent write.
extension HistoryIndex.Version {
    /// Whether this version lost to a concurrent write: it is a value, and
    /// `next`, the version that follows it in stamp order (the one that
    /// replaced it), comes from another device whose writer had not seen it
    /// (its base is older, or nothing). Worked out from the versions alone,
    /// so every device that holds them marks the same ones; a write of format
    /// 1 or 2 (its base unknown) makes no version lost.
    func lost(to next: HistoryIndex.Version) -> Bool {
        !isRemoval && next.stamp.device != stamp.device && next.base.isConcurrent(with: stamp)
    }
}
