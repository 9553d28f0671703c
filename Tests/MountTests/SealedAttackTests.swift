import Foundation
import Testing

/// Issue 26, done when: a third party with write access to a sealed store's
/// folder and no key tries each attack of docs/threat-model.md on two real
/// mounts (devices a and b, paired with `kvfs pair`/`kvfs join`) sharing one
/// sync directory. Each is refused, named in `kvfs status` and in each
/// daemon's log, and no value changes on either mount.
@Suite("A sealed store attacked through its folder", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct SealedAttackTests {
    /// What the third party can do to a journal file without a key (docs/format.md § Frames, § Sealed frames):
    /// read its frames and the index each sealed payload carries in the clear, and append frames whose
    /// CRC-32C is right. `attack index FILE`: the index the file's next record must have;
    /// `attack append FILE INDEX TO`: appends FILE's record at INDEX to TO; `attack alter FILE TO`: appends
    /// FILE's last record (not a mark: flags 3) to TO with its index made TO's next and a byte of its ciphertext flipped.
    static let attack = #"""
        attack() { python3 -c 'import struct, sys
        def crc32c(data):
            crc = 0xFFFFFFFF
            for byte in data:
                crc ^= byte
                for _ in range(8): crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
            return crc ^ 0xFFFFFFFF
        def payloads(path):
            data, offset, found = open(path, "rb").read(), 0, []
            while offset + 8 <= len(data):
                length, = struct.unpack_from("<I", data, offset)
                found.append(data[offset + 8:offset + 8 + length]); offset += 8 + length
            return found
        def index(payload): return struct.unpack_from("<Q", payload, 6)[0]
        def next_index(path): return index(payloads(path)[-1]) + 1 if payloads(path) else 0
        def append(path, payload): open(path, "ab").write(struct.pack("<II", len(payload), crc32c(payload)) + payload)
        command, args = sys.argv[1], sys.argv[2:]
        if command == "index": print(next_index(args[0]))
        elif command == "append": append(args[2], next(p for p in payloads(args[0]) if index(p) == int(args[1])))
        elif command == "alter":
            payload = bytearray([p for p in payloads(args[0]) if p[1] != 3][-1])
            payload[6:14] = struct.pack("<Q", next_index(args[1]))
            payload[14 + 12] ^= 1
            append(args[1], bytes(payload))' "$@"; }
        A=$SYNC/devices/$(cat $T/s-a/device-id); B=$SYNC/devices/$(cat $T/s-b/device-id)
        segA=$(ls $A/journal-*.log | tail -1); segB=$(ls $B/journal-*.log | tail -1)

        """#

    /// One attack: what the third party does, what the device reading the folder says of it, and what puts
    /// the folder back as its device wrote it.
    struct Attack: CustomStringConvertible {
        var description: String
        var script: String
        /// The words of the refusal (docs/sealed.md § Refusals): any one of them.
        var reasons: [String]
        var restore: String

        init(description: String, script: String, reason: String, or otherReasons: String..., restore: String) {
            (self.description, self.script, reasons, self.restore) = (description, script, [reason] + otherReasons, restore)
        }

        /// Whether `text` names the refusal.
        func isNamed(in text: String) -> Bool { reasons.contains { text.contains($0) } }

        /// The options of `grep -F` that find the refusal.
        var grepPatterns: String { reasons.map { "-e '\($0)'" }.joined(separator: " ") }
    }

    static let attacks = [
        Attack(description: "a record forged by a non-member: a folder of a device the roster does not name",
               script: #"f=$SYNC/devices/00112233445566778899aabbccddeeff; mkdir $f && cp $segA $f/"#,
               reason: "its device is not a member of the sealed store",
               restore: "rm -r $SYNC/devices/00112233445566778899aabbccddeeff"),
        // a's frame at b's next index is a record or a mark, as a's signing schedule had it: a record's seal
        // does not open in b's folder, a mark's signature is not b's.
        Attack(description: "a record copied from a's folder into b's, at b's next place",
               script: #"size $segB > $T/size; attack append $segA $(attack index $segB) $segB"#,
               reason: "its seal does not open", or: "its signature is not its device",
               restore: #"truncate -s $(cat $T/size) $segB"#),
        Attack(description: "a record altered after it was signed: a's last record, its index and a byte of its ciphertext changed",
               script: #"size $segA > $T/size; attack alter $segA $segA"#,
               reason: "its seal does not open",
               restore: #"truncate -s $(cat $T/size) $segA"#),
        Attack(description: "a record replayed out of order: a's first record appended again",
               script: #"size $segA > $T/size; attack append $segA 0 $segA"#,
               reason: "record 0 where record",
               restore: #"truncate -s $(cat $T/size) $segA"#),
        Attack(description: "a's folder rolled back: its segment put back as it was before its last write",
               script: #"cp $segA $T/whole; cp $T/before $segA"#,
               reason: "the folder went back",
               restore: #"cp $T/whole $segA"#),
    ]

    /// Seals the store as device a (state `s-a`), pairs b (`s-b`), mounts them at `ma` and `mb`, and writes
    /// `ka1`…`ka3` on a and `kb1` on b.
    static func pairedMounts(_ sandbox: Sandbox) throws {
        _ = try PairingCommandTests.sealed(sandbox)
        _ = try sandbox.ok(PairingCommandTests.pairAB)
        try sandbox.mount("ma", state: "s-a")
        try sandbox.mount("mb", state: "s-b")
        try sandbox.ok("for k in 1 2 3; do echo a$k > $T/ma/ka$k; done; echo b1 > $T/mb/kb1")
    }

    @Test("a forged, a copied, an altered and a replayed record, and a folder rolled back, are each refused and reported, and no value changes on either mount")
    func eachAttackIsRefusedAndNoValueChanges() throws {
        try withSandbox(.plain) { sandbox in  // sealed here, by device a
            try Self.pairedMounts(sandbox)
            // The copy of a's segment the rollback puts back, then a's last write before the attacks.
            try sandbox.ok(Self.attack + "cp $segA $T/before; echo a4 > $T/ma/ka4")
            let values = "ka1 a1\nka2 a2\nka3 a3\nka4 a4\nkb1 b1\n"
            let everyValue = #"for k in $(ls $T/MOUNT); do echo "$k $(cat $T/MOUNT/$k)"; done"#
            for mount in ["ma", "mb"] {
                try waitUntil(seconds: 20, "every value on \(mount)", every: 0.05) {
                    try sandbox.ok(everyValue.replacingOccurrences(of: "MOUNT", with: mount)) == values
                }
            }
            for attack in Self.attacks {
                try sandbox.ok(Self.attack + attack.script)
                // The folder attacked is read by both devices (a reads its own as well): each refuses it.
                for (mount, state) in [("ma", "s-a"), ("mb", "s-b")] {
                    let status = "kvfs status --sync-dir $SYNC --state-dir $T/\(state)"
                    try waitUntil(seconds: 20, "\(mount) to refuse \(attack)", every: 0.05, {
                        attack.isNamed(in: try sandbox.ok(status))
                    }, failure: { (try? sandbox.ok(status)) ?? "" })
                    #expect(attack.isNamed(in: try sandbox.ok("jq -r '.warnings[] | select(.kind == \"refused\") | .message' $T/\(mount)/.kvfs/status")),
                            "\(mount): \(attack)")
                    #expect(try sandbox.ok("grep -c -F \(attack.grepPatterns) $T/\(state)/daemon.log || true") != "0\n",
                            "\(mount)'s log does not name \(attack)")
                    #expect(try sandbox.ok(everyValue.replacingOccurrences(of: "MOUNT", with: mount)) == values, "\(mount): \(attack)")
                }
                try sandbox.ok(Self.attack + attack.restore)
                for state in ["s-a", "s-b"] {
                    try waitUntil(seconds: 20, "the refusal of \(attack) to end on \(state)", every: 0.05) {
                        try !attack.isNamed(in: sandbox.ok("kvfs status --sync-dir $SYNC --state-dir $T/\(state)"))
                    }
                }
            }
            // The folders put back, the two mounts go on reading each other's writes.
            try sandbox.ok("echo a5 > $T/ma/ka5; echo b2 > $T/mb/kb2")
            try waitUntil(seconds: 20, "the writes after the attacks", every: 0.05) {
                try sandbox.ok("cat $T/mb/ka5 $T/ma/kb2 2>/dev/null || true") == "a5\nb2\n"
            }
            #expect(try sandbox.ok("cat $T/ma/ka1 $T/mb/ka4") == "a1\na4\n")
        }
    }

    @Test("roster/ deleted with every other device's folder: a member opens the store sealed still, and writes nothing in the clear")
    func aDeletedRosterLeavesTheStoreSealed() throws {
        try withSandbox(.plain) { sandbox in  // sealed here, by device a
            try Self.pairedMounts(sandbox)
            try waitUntil(seconds: 20, "a's values on b", every: 0.05) { try sandbox.ok("cat $T/mb/ka3 2>/dev/null || true") == "a3\n" }
            try sandbox.ok("kvfs unmount $T/ma; kvfs unmount $T/mb; rm -r $SYNC/roster $SYNC/devices/$(cat $T/s-a/device-id)")
            try sandbox.mount("mb", state: "s-b")
            #expect(try sandbox.ok("cat $T/mb/kb1") == "b1\n")
            try sandbox.ok("echo clear-text-secret > $T/mb/kb2")
            #expect(try sandbox.run("grep -rqF -e clear-text-secret -e kb2 $SYNC").status == 1, "b wrote in the clear")
            #expect(try sandbox.ok("cat $T/mb/kb2") == "clear-text-secret\n")
        }
    }
}
