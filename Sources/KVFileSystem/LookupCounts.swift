import FUSEKit

/// How many lookups the kernel holds on each inode it was given: an inode
/// keeps its name (or history node) while the count is above zero, and is
/// freed when a FORGET brings it to zero.
struct LookupCounts {
    private var counts: [InodeNumber: UInt64] = [:]

    /// One more lookup of `inode`, given out to the kernel.
    mutating func add(_ inode: InodeNumber) {
        counts[inode, default: 0] += 1
    }

    /// The kernel dropped `count` lookups of `inode`; true when none are left
    /// (the inode may be freed), false while some are, or when it held none.
    mutating func forget(_ inode: InodeNumber, count: UInt64) -> Bool {
        guard let held = counts[inode] else { return false }
        if held > count {
            counts[inode] = held - count
            return false
        }
        counts[inode] = nil
        return true
    }

    /// Whether the kernel holds any lookup of `inode`.
    func isHeld(_ inode: InodeNumber) -> Bool { counts[inode] != nil }
}
