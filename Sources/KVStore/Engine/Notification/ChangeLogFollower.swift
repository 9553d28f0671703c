import Foundation
import SystemPackage

/// Reads the change log as it grows and hands out each of its lines once,
/// though the log is cut back: `kvfs changes --follow` and the mount's
/// `.kvfs/changes.log` read it through one.
///
/// When the log passes its cap, `ChangeLog` replaces the file with its
/// newest lines. A reader that went by byte offsets alone would see the file
/// shrink and, as `tail -f` does ("file truncated"), start again from its
/// beginning: half the cap of old lines a second time, at every cut. The
/// follower holds the file it read open, and knows it by device and inode. While it is the
/// same file, it reads on from the end of the last whole line it handed out;
/// a new file (the cut-back log, written beside the old one and renamed over
/// it, so it always has another inode) is read from its start, skipping the
/// lines up to the last one handed out, known by their `seq`, which only
/// grows. Lines that were cut before the follower read them show as a gap in
/// `seq`, counted in ``missed``.
public final class ChangeLogFollower {
    /// The log's path.
    public let path: String
    /// The `seq` of the last line handed out, if any was.
    public private(set) var lastSequence: Int?
    /// How many lines went from the log, cut back, before they were read.
    public private(set) var missed = 0
    /// The log's modification time when it was last read.
    public private(set) var modified: Date?
    /// The file last read, held open: a file's inode number is reused once
    /// the file is gone, and a held file is not gone, so a file at the path
    /// with the same device and inode is this one.
    private var file: FileDescriptor?
    /// Where the last whole line read from `file` ends.
    private var offset = 0

    /// A follower of the log at `path` that has read nothing yet.
    public init(path: String) {
        self.path = path
    }

    deinit { try? file?.close() }

    /// The whole lines appended since the last call, in order (at the first
    /// call, every line of the log). A line still being written waits for a later call;
    /// a log that cannot be read (not there yet, gone) has no new lines.
    public func newLines() -> [UInt8] {
        let name = (path as NSString).lastPathComponent
        guard let folder = try? Folder.open((path as NSString).deletingLastPathComponent),
              let opened = try? folder.openFile(name, .readOnly) else { return [] }
        guard let status = try? opened.stat() else {
            try? opened.close()
            return []
        }
        let held = file.flatMap { try? $0.stat() }
        let sameFile = held.map { $0.deviceID == status.deviceID && $0.inode == status.inode && status.size >= offset } ?? false
        if sameFile {
            try? opened.close()
        } else {
            try? file?.close()
            file = opened
            offset = 0
        }
        guard let file, let bytes = try? folder.read(file, named: name, from: offset) else { return [] }
        modified = Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
        guard let lastNewline = bytes.lastIndex(of: 0x0A) else { return [] }
        offset += lastNewline + 1
        let lines = bytes[...lastNewline].split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        let first = !sameFile ? lastSequence.map { Self.firstLine(after: $0, in: lines, missed: &missed) } : nil
        let handedOut = lines[(first ?? lines.startIndex)...]
        if let newest = handedOut.last.flatMap(ChangeLog.sequence(of:)) { lastSequence = newest }
        return handedOut.first.map { Array(bytes[$0.startIndex...lastNewline]) } ?? []
    }

    /// Where, in a new log file's `lines`, the lines after the one numbered
    /// `last` begin: at the first whose `seq` is greater, or at the start
    /// when the newest is smaller (the log began again: it was removed, or
    /// its state directory is new).
    private static func firstLine(after last: Int, in lines: ArraySlice<ArraySlice<UInt8>>, missed: inout Int) -> Int {
        guard let newest = lines.last.flatMap(ChangeLog.sequence(of:)), newest >= last else { return lines.startIndex }
        guard let first = lines.firstIndex(where: { ChangeLog.sequence(of: $0).map { $0 > last } ?? false }) else { return lines.endIndex }
        if let sequence = ChangeLog.sequence(of: lines[first]), sequence > last + 1 { missed += sequence - last - 1 }
        return first
    }
}
