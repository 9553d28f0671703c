import ArgumentParser
import Foundation
import KVStore

/// `kvfs pair`: on a member of a sealed store, shows a one-time code and adds the machine that types it.
struct PairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair", abstract: "Add a new machine to a sealed store: show a one-time code to type there.",
        discussion: """
            Run on a machine that is a member of the sealed store. It prints a code of 16 words, then waits: on the \
            new machine, run kvfs join and type the code. The two machines talk only through the sync directory \
            (the synchronizer must carry it both ways). Once the new machine has asked with the code, this one adds it \
            to the roster, hands it the store key, and ends once the new machine has taken it. A code serves once.
            """)
    @Option(help: "How long to wait for the new machine, in seconds.") var timeout: Int = 600
    @OptionGroup var store: StoreOptions

    func run() throws {
        guard timeout > 0 else { throw CommandError.usage("--timeout must be a positive number of seconds") }
        let membership = Membership(syncDirectory: try store.syncURL, stateDirectory: try store.stateURL)
        let code = try membership.startPairing()
        // Unbuffered: the person (or a script) needs the code while this waits.
        FileHandle.standardOutput.write(Data("""
            On the new machine, run kvfs join (with its --store or --sync-dir) and type this code:
            \(code.words)

            """.utf8))
        let joined = try membership.completePairing(code, timeout: .seconds(timeout))
        print("paired \(joined.name) (\(joined.id))")
    }
}

/// `kvfs join`: on a new machine, joins a sealed store with the code `kvfs pair` shows on a member,
/// or with the recovery key when no member is left.
struct JoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join", abstract: "Join this machine to a sealed store, with the code kvfs pair shows on a member.",
        discussion: """
            Reads the code (16 words) from standard input, asks the member through the sync directory, and waits \
            for its answer. With --recovery-key it reads the store's recovery key (32 words) instead and joins \
            without any member: for when every machine of the store is lost.
            """)
    @Flag(help: "Read the store's recovery key instead of a pairing code.") var recoveryKey = false
    @Option(help: "How long to wait for the member, in seconds.") var timeout: Int = 600
    @Option(help: "This machine's name in the roster (default: the host name).") var deviceName: String?
    @OptionGroup var store: StoreOptions

    func run() throws {
        guard timeout > 0 else { throw CommandError.usage("--timeout must be a positive number of seconds") }
        let membership = Membership(syncDirectory: try store.syncURL, stateDirectory: try store.stateURL)
        let name = try rosterName(deviceName)
        if isatty(STDIN_FILENO) != 0 {
            FileHandle.standardError.write(Data((recoveryKey ? "Recovery key (32 words): " : "Code (16 words): ").utf8))
        }
        let typed = readLine() ?? ""
        let version = recoveryKey
            ? try membership.recover(with: RecoveryKey(words: typed), deviceName: name)
            : try membership.join(code: PairingCode(words: typed), deviceName: name, timeout: .seconds(timeout))
        print("joined: this machine is a member of the sealed store (roster version \(version))")
    }
}

/// `kvfs seal`: seals a store, new or holding values, this machine its first member, and prints the recovery key once.
struct SealCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal", abstract: "Seal a store: values, key names and history encrypted, every record signed.",
        discussion: """
            Run on one machine of the store, with no mount of it running there. It writes the store's roster (this \
            machine and the recovery key its members), then prints the recovery key, 32 words, once: keep it somewhere \
            safe, it is the only way back in when every machine is lost (kvfs join --recovery-key). A store that holds \
            values is converted by compaction, with nothing lost: this machine adopts every other device's values, \
            removals and history (as kvfs retire does) and removes their plain folders, and its own folder becomes a \
            sealed snapshot of everything the store holds; no plain value is left in the sync directory. The other \
            machines are no members until they join (kvfs pair here, kvfs join there). A machine whose mount looks alive \
            is refused unless --force: unmount it first. With --force its folder is left; once its mount sees the \
            roster it writes nothing more, and what it wrote meanwhile is sealed when it mounts again as a member. See \
            docs/sealed.md and docs/threat-model.md.
            """)
    @Option(help: "This machine's name in the roster (default: the host name).") var deviceName: String?
    @Flag(help: "Seal even while another machine's mount looks alive, or its folder has not fully arrived: its records here are kept, and its folder is left until it joins.")
    var force = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let (sync, state) = (try store.syncURL, try store.stateURL)
        let name = try rosterName(deviceName)
        // Opened once for the ids the roster names (the store's and this device's), then read-only, which a mount refuses.
        try DeviceStore(syncDirectory: sync, stateDirectory: state).close()
        try DeviceStore(syncDirectory: sync, stateDirectory: state, readOnly: true).close()
        let sealed = try Membership(syncDirectory: sync, stateDirectory: state).seal(deviceName: name, force: force)
        print("""
            sealed: this machine is the store's first member. Its recovery key, shown this once:
            \(sealed.recoveryKey.words)
            """)
        // Opened again, sealed: its plain records, every value of the store now, are sealed by a compaction.
        try DeviceStore(syncDirectory: sync, stateDirectory: state).close()
        for device in sealed.adopted {
            let kept = "kept \(device.name) (\(device.id.hex))'s \(device.values) values and \(device.removals) removals, sealed in this machine's folder"
            let folder = device.folderLeft.map { "its folder is left until it joins (\($0)); its mount writes nothing more once it sees the store sealed" }
                ?? "its plain folder is removed"
            print("\(kept); \(folder). It is no member: run kvfs pair here and kvfs join there")
        }
    }
}

/// The name a machine takes in the roster: the one given, checked as a device name, else the host name.
private func rosterName(_ given: String?) throws -> String {
    guard let given else { return ProcessInfo.processInfo.hostName }
    do { return try DeviceName.validate(given) } catch { throw CommandError.usage("\(error)") }
}

/// `kvfs recovery-key --rotate`: on a member, replaces the store's recovery key, which it reads from standard input.
struct RecoveryKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-key", abstract: "Replace a sealed store's recovery key (--rotate), given the one in force.",
        discussion: """
            Run on a member of the sealed store. Reads the recovery key in force (32 words) from standard input: only \
            it may change the recovery key. Writes a roster version, signed by it, that names a new recovery key in its \
            place and moves the store to a new epoch whose key only the members and the new recovery key get, then \
            prints the new key, 32 words, once. The old key opens nothing written after this, and joins no machine. \
            See docs/sealed.md § Recovery key.
            """)
    @Flag(help: "Replace the recovery key (the only thing this command does; it must be given).") var rotate = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        guard rotate else { throw CommandError.usage("kvfs recovery-key does one thing, --rotate: give it to replace the recovery key") }
        let membership = Membership(syncDirectory: try store.syncURL, stateDirectory: try store.stateURL)
        if isatty(STDIN_FILENO) != 0 { FileHandle.standardError.write(Data("Recovery key in force (32 words): ".utf8)) }
        let (next, epoch) = try membership.rotateRecoveryKey(current: RecoveryKey(words: readLine() ?? ""))
        print("""
            rotated: the store's new recovery key, shown this once (the old one opens nothing from epoch \(epoch) on):
            \(next.words)
            """)
    }
}
