import ArgumentParser
import Foundation
import KVBucket
import KVStore

/// `kvfs sync [--once]`: carries the sync root to and from every added bucket.
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Carry the sync root to and from the added buckets, until stopped (or one round with --once).",
        discussion: """
            A round uploads what changed in this machine's device folders (one object for each file's new bytes, \
            then this machine's head) and reads each other machine's head, downloading what it lacks. An idle \
            round makes one GET per other machine, and no PUT or LIST. A write on this machine starts a round at \
            once (inotify on its device folders). Otherwise, between rounds it waits --fastest seconds, \
            twice as long after each idle or failed round up to --slowest (each wait 10% longer or shorter at \
            random), and --fastest again once anything changed. A failure is said once on standard error (again \
            only when it changes or after a round succeeded) and tried again at the next round.
            """)
    @Flag(help: "Do one round and exit: status 0 when it succeeded with every bucket.") var once = false
    @Option(help: "Seconds between rounds while something changes.") var fastest: Double = 2
    @Option(help: "Seconds between rounds after a long idle time.") var slowest: Double = 60

    func validate() throws {
        guard fastest > 0, slowest >= fastest else { throw CommandError.usage("give 0 < --fastest <= --slowest") }
    }

    func run() throws {
        let buckets = try BucketList().load()
        guard !buckets.isEmpty else { throw BucketError.configuration("no bucket is added: kvfs bucket add s3://BUCKET[/PREFIX] first") }
        let syncs = try buckets.map { try BucketSync(client: try $0.client(), location: $0.location) }
        if once {
            for sync in syncs { try sync.round() }
            return
        }
        let changes = try LocalChanges()
        var lastErrors: [String?] = Array(repeating: nil, count: syncs.count)
        /// One round with each bucket; true when any uploaded or downloaded. A failure is said once.
        func rounds(downloading: Bool) -> Bool {
            var changed = false
            for (index, sync) in syncs.enumerated() {
                do {
                    let round = try sync.round(downloading: downloading)
                    changed = changed || round.uploaded || round.downloaded
                    lastErrors[index] = nil
                } catch {
                    if lastErrors[index] != error.description {
                        FileHandle.standardError.write(Data("kvfs sync: \(buckets[index].location): \(error.description)\n".utf8))
                    }
                    lastErrors[index] = error.description
                }
            }
            return changed
        }
        var interval = fastest
        while true {
            // A failed round backs off as an idle one does; the jitter keeps machines that failed together apart.
            interval = rounds(downloading: true) ? fastest : min(interval * 2, slowest)
            // Writes on this machine are uploaded as they come (inotify); one that uploads something brings the
            // next download, and the fastest pace, at once. A heartbeat that changes nothing uploads nothing.
            let deadline = Date(timeIntervalSinceNow: interval * Double.random(in: 0.9...1.1))
            while deadline.timeIntervalSinceNow > 0, changes.wait(seconds: deadline.timeIntervalSinceNow) {
                if rounds(downloading: false) {
                    interval = fastest
                    break
                }
            }
        }
    }
}
