import Foundation
@_exported import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One test's world: a temporary folder with its own sync directory (`sync`),
/// state directory (`state`), mount point (`m`), and `HOME`/`XDG_*` for the
/// child processes, so tests run side by side without meeting.
///
/// Scripts run with `/bin/sh -c` in the folder, with `kvfs` (the built one,
/// or `$KVFS_BINARY`'s, to check a test against another build) first on `PATH` and these variables: `T` (the folder), `M` (the mount
/// point), `SYNC`, `STATE`, and `S` (`--sync-dir $SYNC --state-dir $STATE`).
/// ``close()`` unmounts everything under the folder — cleanly if it can, else
/// by killing the daemon and detaching the mount — and removes it.
///
/// In a sealed sandbox (``Sealing/sealed``, or any with `KVFS_TEST_SEALED=1`)
/// every store a test uses is sealed, by the first device to use it, and
/// every other device joins it first (docs/sealed.md), whichever way the
/// test runs kvfs: the `kvfs` first on `PATH` is ``sealingKvfs`` (so are the
/// copies a test installs, and what mount.fuse3, fstab and a unit's
/// `ExecStart` run), and a store the test opens in its own process joins as
/// it opens (``SealedSandboxes``). So one test runs both ways.
///
/// As root, each sandbox has a private mount namespace of its own (see
/// ``MountNamespace``): its scripts, and the daemons they start, mount
/// there. Another process that makes a mount namespace meanwhile (a test's
/// `unshare -m`, `ip netns exec`, another test run on the machine) gets no
/// copy of these mounts, and a test that dies leaves no mount behind.
final class Sandbox {
    let folder: TemporaryFolder
    var path: String { folder.path }
    let environment: [String: String]
    let namespace: MountNamespace?
    /// Whether the stores the test makes are sealed.
    let sealing: Sealing
    /// In a sealed sandbox, what its `kvfs` keeps (``sealingKvfs``): beside the sandbox, which only its
    /// owner enters, so that a test's copy of `kvfs` run as nobody reaches it too.
    let sealingFolder: TemporaryFolder?

    /// The name of the store's first device when no `--device-name` names it: the host name, or in a sealed
    /// sandbox the one its roster gives it (`kvfs seal --device-name sealer`: docs/sealed.md § Signed files).
    var firstDeviceName: String { sealing == .sealed ? "sealer" : ProcessInfo.processInfo.hostName }

    var mountPoint: String { path + "/m" }
    var syncDirectory: String { path + "/sync" }
    var stateDirectory: String { path + "/state" }

    init(_ sealing: Sealing = .default) throws {
        self.sealing = sealing
        folder = TemporaryFolder("kvfs-mount-test")
        let path = folder.path
        for folder in ["m", "home", "home/data", "home/state", "home/config", "run"] {
            try FileManager.default.createDirectory(atPath: path + "/" + folder, withIntermediateDirectories: true)
        }
        chmod(path + "/run", 0o700)
        namespace = MountNamespace()
        let inherited = ProcessInfo.processInfo.environment
        let products = (MountEnvironment.kvfs as NSString).deletingLastPathComponent
        sealingFolder = sealing == .sealed ? TemporaryFolder("kvfs-mount-test-sealing") : nil
        if let sealingFolder { try Self.installSealingKvfs(in: path, keeping: sealingFolder.path) }
        environment = [
            "PATH": (sealing == .sealed ? path + "/bin" : products) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": path + "/home",
            "XDG_DATA_HOME": path + "/home/data",
            "XDG_STATE_HOME": path + "/home/state",
            "XDG_CONFIG_HOME": path + "/home/config",
            "XDG_RUNTIME_DIR": path + "/run",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": inherited["TERM"] ?? "dumb",
            "T": path,
            "M": path + "/m",
            "SYNC": path + "/sync",
            "STATE": path + "/state",
            "S": "--sync-dir \(path)/sync --state-dir \(path)/state",
            // kvfs-store-probe makes its device a member through the sandbox's kvfs.
            "KVFS_TEST_SANDBOX_SEALED": sealing == .sealed ? "1" : "",
        ]
        if let sealingFolder { SealedSandboxes.add(path, keeping: sealingFolder.path) }
    }

    /// Puts ``sealingKvfs`` at `bin/kvfs` in the sandbox `path`, beside links to the build's other programs
    /// (install.sh takes generate-manual from kvfs's folder).
    private static func installSealingKvfs(in path: String, keeping kept: String) throws {
        let bin = path + "/bin", products = (MountEnvironment.kvfs as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for program in ["generate-manual", "fusekit-hello", "kvfs-store-probe"] {
            try? FileManager.default.createSymbolicLink(atPath: bin + "/" + program, withDestinationPath: products + "/" + program)
        }
        // What it keeps, writable by every user: a test's copy of it may run as nobody.
        chmod(kept, 0o777)
        for file in ["recovery-keys", "admitted", "seal.out", "admit.log"] {
            _ = FileManager.default.createFile(atPath: kept + "/" + file, contents: nil)
            chmod(kept + "/" + file, 0o666)
        }
        let script = sealingKvfs.replacingOccurrences(of: "@K@", with: kept).replacingOccurrences(of: "@KVFS@", with: MountEnvironment.kvfs)
        try writeExecutable(bin + "/kvfs", script)
    }

    /// Writes the executable `path` through a descriptor closed on exec. (FileManager's is not, so a
    /// process another test started meanwhile could keep it open for writing, and running the script then
    /// failed with "Text file busy": seen in the sealed MountTests pass under load.)
    private static func writeExecutable(_ path: String, _ text: String) throws {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { Glibc.close(descriptor) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            written += count
        }
    }

    /// A sealed sandbox's `kvfs` (`@K@` ``sealingFolder``, `@KVFS@` the built kvfs): it makes the device a command
    /// names (by its `--sync-dir`, `--store` and `--state-dir`, or mount.fuse3's `SYNC_DIR MOUNTPOINT -o
    /// state_dir=…,store=…`, and `$XDG_STATE_HOME`) a member of its store, then runs kvfs; a command that
    /// only reads leaves a store that does not exist alone, as kvfs does. The first device to use a store seals it
    /// (`kvfs seal`, its recovery key kept in ``sealingFolder``'s `recovery-keys`); every other joins it with the recovery key
    /// (`kvfs join --recovery-key`, as when no member is left to pair it; PairingCommandTests drives `kvfs
    /// pair`); `kvfs sandbox-admit STORE-OPTIONS…` does that alone, for a device a program opens in its own
    /// process (``admit(state:sync:)``, kvfs-store-probe). A file, not a shell function: whatever runs kvfs (a script, a copy of it installed elsewhere,
    /// mount.fuse3 with mount(8)'s empty environment, a unit's `ExecStart`) runs this.
    static let sealingKvfs = #"""
        #!/bin/sh
        K='@K@' KVFS='@KVFS@'
        options() {  # a mount's -o list: state_dir= and store= (the store in the root the first argument names)
            set -f; old=$IFS; IFS=,
            for option in $1; do
                case "$option" in state_dir=*) state=${option#*=} ;; store=*) inroot=${option#*=} ;; esac
            done
            IFS=$old; set +f
        }
        admit() {
            sync= store= state= inroot= previous=
            case "$1" in
            seal | join | pair | unmount | stores | help | -* | "") return 0 ;;
            */*) case "$2" in -* | "") return 0 ;; *) sync=$1 ;; esac ;;  # mount.fuse3's kvfs SYNC_DIR MOUNTPOINT -o OPTIONS
            esac
            command=$1
            for argument in "$@"; do
                case "$previous" in --sync-dir) sync=$argument ;; --store) store=$argument ;; --state-dir) state=$argument ;; -o) options "$argument" ;; esac
                case "$argument" in
                --sync-dir=*) sync=${argument#*=} ;; --store=*) store=${argument#*=} ;; --state-dir=*) state=${argument#*=} ;;
                -o?*) options "${argument#-o}" ;;
                esac
                previous=$argument
            done
            data=${XDG_DATA_HOME:-$HOME/.local/share}
            if [ -n "$inroot" ]; then
                [ -z "$store" ] || return 0  # refused by kvfs itself
                sync=${sync:-$data/kvfs}/$inroot
            fi
            key="$sync|$store|${state:-${XDG_STATE_HOME:-$HOME/.local/state}}"
            grep -qxF "$key" "$K/admitted" && return 0
            folder=${sync:-$data/kvfs/${store:-default}}
            case "$command" in get | ls | status | devices | changes | history | export | wait | retention) [ -d "$folder" ] || return 0 ;; esac
            set --
            [ -z "$sync" ] || set -- "$@" --sync-dir "$sync"
            [ -z "$store" ] || set -- "$@" --store "$store"
            [ -z "$state" ] || set -- "$@" --state-dir "$state"
            if [ -d "$folder/roster" ]; then
                while read -r words; do
                    echo "$words" | "$KVFS" join --recovery-key --device-name joiner "$@" > /dev/null 2>&1 || continue
                    echo "$key" >> "$K/admitted"; return 0
                done < "$K/recovery-keys"
                echo "sealed sandbox: no recovery key kept here opens $folder" >> "$K/admit.log"; return 1
            fi
            "$KVFS" seal --device-name sealer "$@" > "$K/seal.out" 2>> "$K/admit.log" || return
            sed -n 2p "$K/seal.out" >> "$K/recovery-keys"
            echo "$key" >> "$K/admitted"
        }
        # `kvfs sandbox-admit STORE-OPTIONS…` admits the device alone, for a program that opens the store itself.
        [ "$1" != sandbox-admit ] || { shift; admit mount "$@"; exit; }
        admit "$@"
        exec "$KVFS" "$@"

        """#

    /// Runs a script; see the type's documentation for what it has, and ``Sandbox/prelude`` for its helpers.
    func run(_ script: String, timeout: Int = 60) throws -> ShellResult {
        try runShell(Self.prelude + script, in: path, environment: environment, timeout: timeout, namespace: namespace?.holder)
    }

    /// Shell functions every script has:
    /// - `bytes FILE…`: each file's exact content as a Python bytes literal, one a line;
    /// - `size FILE…`: each file's `st_size`, one a line;
    /// - `xtype FILE`: the file's `user.kvfs.type`, one line;
    /// - `pywrite FILE CONTENT [FLAGS]`: open (O_WRONLY|O_CREAT|O_TRUNC, or
    ///   `append`), write CONTENT (Python escapes such as `\x00` allowed), close;
    ///   prints `ok`, or the errno names of the failed calls (`write: EDQUOT`,
    ///   `close: EINVAL`) — unlike the shell's `>`, which ignores close()'s errors.
    static let prelude = #"""
        bytes() { python3 -c 'import sys
        for p in sys.argv[1:]: print(repr(open(p, "rb").read()))' "$@"; }
        size() { stat -c %s "$@"; }
        xtype() { getfattr --absolute-names --only-values -n user.kvfs.type "$1" && echo; }
        pywrite() { python3 -c 'import os, sys, errno
        path, data = sys.argv[1], sys.argv[2].encode("utf-8").decode("unicode_escape").encode("latin-1")
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if sys.argv[3:] == ["append"] else os.O_TRUNC)
        failed = []
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as e:
            print("open:", errno.errorcode[e.errno]); sys.exit(1)
        try:
            os.write(fd, data)
        except OSError as e:
            failed.append("write: " + errno.errorcode[e.errno])
        try:
            os.close(fd)
        except OSError as e:
            failed.append("close: " + errno.errorcode[e.errno])
        print(" ".join(failed) or "ok")' "$@"; }

        """#

    /// In a sealed sandbox, makes the device of state directory `state` (in the sandbox) a member of the
    /// store at `sync` before the test opens it in its own process as that store's first device, which
    /// ``SealedSandboxes`` cannot seal; in a plain one, nothing.
    func admit(state: String, sync: String = "sync") throws {
        guard sealing == .sealed else { return }
        try ok("kvfs sandbox-admit --sync-dir \"$T/\(sync)\" --state-dir \"$T/\(state)\"")
    }

    /// Runs a script that must succeed; returns its standard output.
    @discardableResult
    func ok(_ script: String, timeout: Int = 60, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(script, timeout: timeout)
        #expect(result.status == 0, "script failed: \(script)\n\(result)", sourceLocation: sourceLocation)
        return result.output
    }

    /// Mounts the sandbox's store (or the given one) with `kvfs mount`, which must succeed.
    func mount(_ mountPoint: String = "m", sync: String = "sync", state: String = "state", options: String = "",
               sourceLocation: SourceLocation = #_sourceLocation) throws {
        try FileManager.default.createDirectory(atPath: path + "/" + mountPoint, withIntermediateDirectories: true)
        let result = try run("kvfs mount \"$T/\(mountPoint)\" --sync-dir \"$T/\(sync)\" --state-dir \"$T/\(state)\" \(options)")
        guard result.status == 0, isMounted(path + "/" + mountPoint) else {
            Issue.record("kvfs mount \(mountPoint) failed: \(result)", sourceLocation: sourceLocation)
            throw MountFailed()
        }
    }

    struct MountFailed: Error {}

    /// The mounts under the sandbox (in its namespace), deepest first.
    func mounts() -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(namespace?.holder ?? getpid())/mounts") else { return [] }
        let table = String(decoding: data, as: UTF8.self)
        return table.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 2 else { return nil }
            let point = Self.unescape(String(fields[1]))
            return point.hasPrefix(path + "/") ? point : nil
        }.sorted { $0.count > $1.count }
    }

    /// Whether the sandbox's mount table lists a mount at `point`.
    func isMounted(_ point: String) -> Bool { mounts().contains(point) }

    /// Processes (other than this one) whose command line names something in the sandbox: its daemons and loops.
    func processes() -> [pid_t] {
        let me = getpid()
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), pid != me,
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains { $0.contains(path + "/") || $0 == path } ? pid : nil
        }
    }

    /// The daemons serving `point` (`kvfs … --foreground` naming it).
    func daemons(of point: String) -> [pid_t] {
        processes().filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("--foreground") && arguments.contains(point)
        }
    }

    /// Unmounts everything, kills what is left, removes the folder.
    func close() {
        for point in mounts() {
            var info = stat()
            let healthy = stat(point, &info) == 0
            let result = try? runShell("kvfs unmount \"\(point)\"", in: path, environment: environment, timeout: 20, namespace: namespace?.holder)
            if healthy {  // a clean unmount is part of every test
                #expect(result?.status == 0, "kvfs unmount \(point) failed: \(result.map(String.init(describing:)) ?? "did not run")")
                #expect(daemons(of: point).isEmpty, "the daemon of \(point) still runs after kvfs unmount returned")
            }
        }
        // Last resort: whatever still runs or is mounted goes.
        for pid in processes() { kill(pid, SIGKILL) }
        if let namespace {
            namespace.close()  // its mounts go with it, once its last process has
        } else {
            for point in mounts() { _ = umount2(point, Int32(MNT_DETACH)) }
        }
        SealedSandboxes.remove(path)
        sealingFolder?.cleanup()
        if poll(seconds: 1, until: { mounts().isEmpty }) {
            folder.cleanup()
        } else {
            Issue.record("could not unmount \(mounts()); leaving \(path) in place")
        }
    }

    private static func unescape(_ field: String) -> String {
        field.replacingOccurrences(of: "\\040", with: " ").replacingOccurrences(of: "\\011", with: "\t")
            .replacingOccurrences(of: "\\012", with: "\n").replacingOccurrences(of: "\\134", with: "\\")
    }
}

/// Runs `body` with a fresh sandbox (of plain or sealed stores), closed afterwards whatever happens.
func withSandbox(_ sealing: Sealing = .default, _ body: (Sandbox) throws -> Void) throws {
    try MountEnvironment.requireBinary()
    let sandbox = try Sandbox(sealing)
    defer { sandbox.close() }
    try body(sandbox)
}

/// Runs `body` with a fresh sandbox (of plain or sealed stores) whose store is mounted at `m`.
func withMount(_ sealing: Sealing = .default, _ body: (Sandbox) throws -> Void) throws {
    try withSandbox(sealing) { sandbox in
        try sandbox.mount()
        try body(sandbox)
    }
}
