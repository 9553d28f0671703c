// kvfs-store-probe: a Swift program that uses NSUbiquitousKeyValueStore.default
// as an app does, for the tests of stores per app (MountTests/AppStoreTests).
// Its arguments are steps, run in order; what it sees is printed one line each:
//   identifier          the identifier of the store .default opens
//   set KEY VALUE       stores a string
//   get KEY             prints the string, or nil
//   fill                fills the quota to its last byte with one data value,
//                       then tries one byte more (refused: QuotaViolationChange)
//   usage               prints the keys and bytes the store uses
//   watch SECONDS       waits, printing every change notification meanwhile
//   wait-for KEY SECONDS  waits until a notification names KEY (or says timeout)
//   burst N PREFIX BYTES  sets PREFIX0…PREFIX49 round and round, N writes in all, the
//                       Ith the text I padded with BYTES dots; stops the program on a refusal
// Every didChangeExternallyNotification is printed as it comes:
//   notified REASON KEY,KEY...
import Foundation
import KVStore
import TestSupport

// In a sealed sandbox (MountTests' Sandbox), this machine's device is made a member of the store first, by the
// sandbox's kvfs (which seals the store, or joins it): the store, opening in this process, cannot do that itself.
if ProcessInfo.processInfo.environment["KVFS_TEST_SANDBOX_SEALED"] == "1" {
    let admit = Process()
    admit.executableURL = URL(fileURLWithPath: "/bin/sh")
    admit.arguments = ["-c", "kvfs sandbox-admit --store \"$1\"", "sh", UbiquitousKeyValueStore.defaultStoreIdentifier.rawValue]
    try admit.run()
    admit.waitUntilExit()
}

let store = NSUbiquitousKeyValueStore.default
let seen = NotificationLog()
_ = NotificationCenter.default.addObserver(forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil) { note in
    let reason = note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int ?? -1
    let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
    seen.add(keys)
    print("notified \(reason) \(keys.sorted().joined(separator: ","))")
}
store.synchronize()

/// The keys notified so far, from the notification queue.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: Set<String> = []
    func add(_ more: [String]) { lock.withLock { keys.formUnion(more) } }
    func contains(_ key: String) -> Bool { lock.withLock { keys.contains(key) } }
}

var steps = Array(CommandLine.arguments.dropFirst())
@MainActor func next() -> String { steps.isEmpty ? "" : steps.removeFirst() }
while !steps.isEmpty {
    switch next() {
    case "identifier": print(UbiquitousKeyValueStore.defaultStoreIdentifier)
    case "set":
        let key = next()
        store.set(next(), forKey: key)
    case "get": print(store.string(forKey: next()) ?? "nil")
    case "fill":
        let room = Limits.maxTotalBytes - store.usage.bytes
        try store.setValue(.data(Data(count: room)), forKey: "fill")
        do { try store.setValue(.data(Data(count: 1)), forKey: "one-more") } catch { print("refused: \(error)") }
    case "usage": print("usage \(store.usage.keys) keys \(store.usage.bytes) bytes")
    case "watch": Thread.sleep(forTimeInterval: Double(next()) ?? 1)
    case "wait-for":
        let key = next(), seconds = Double(next()) ?? 10
        if !poll(seconds: seconds, every: 0.05, until: { seen.contains(key) }) { print("timeout waiting for \(key)") }
    case "burst":
        let count = Int(next()) ?? 0, prefix = next(), padding = String(repeating: ".", count: Int(next()) ?? 0)
        for write in stride(from: 1, through: count, by: 1) {
            try store.setValue(.string("\(write)" + padding), forKey: prefix + String(write % 50))
        }
    case let step: fatalError("unknown step \(step)")
    }
}
store.synchronize()
