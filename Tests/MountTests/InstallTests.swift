import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 10 "Install" and "Start at boot": mount-scripts/install.sh puts
/// kvfs, kvfs(1), the completions and the systemd units where each tool
/// looks; uninstall.sh takes them away and leaves stores alone; the units
/// and fstab's systemd units pass `systemd-analyze verify`; `mount -t
/// fuse.kvfs` finds an installed kvfs with mount(8)'s empty environment.
/// (The Debian package has its own test: mount-scripts/test-package.sh.)
@Suite("Installing kvfs", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct InstallTests {
    /// The repository's root, where mount-scripts/ is.
    static let repository = Repository.root
    static let generateManual = MountEnvironment.productsDirectory.appendingPathComponent("generate-manual").path

    static func requireGenerateManual() throws {
        guard access(generateManual, X_OK) == 0 else {
            throw MountEnvironment.MissingBinary(path: generateManual, build: "swift build --product generate-manual", hint: "run-tests.sh does")
        }
    }

    /// Lists what install.sh put under PREFIX: `find` relative to it.
    static let installedFiles = #"find "$P" -type f | sed "s|^$P/||" | sort"#

    @Test("install.sh --prefix puts kvfs, kvfs(1), completions and the units (kvfs@ system and user, kvfs-store@ for a store by its identifier, kvfs-sync for the buckets) in their places; man, bash and systemd-analyze verify find them; uninstall.sh removes them and no store")
    func prefixInstall() throws {
        try Self.requireGenerateManual()
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                export P=$T/prefix
                kvfs set theme dark                       # a store, which uninstall must leave
                \#(Self.repository)/mount-scripts/install.sh --prefix $P --bin-dir "$(dirname "$(command -v kvfs)")" 2>/dev/null
                \#(Self.installedFiles)
                $P/bin/kvfs --version | cut -d' ' -f1
                MANPATH=$P/share/man man -w kvfs | sed "s|$P|P|"
                MANPATH=$P/share/man man kvfs 2>/dev/null | grep -c 'kvfs mount' | sed 's/^[1-9][0-9]*$/man shows kvfs mount/'
                bash -c "source $P/share/bash-completion/completions/kvfs && complete -p kvfs" | sed 's/-F [^ ]*/-F F/'
                head -1 $P/share/zsh/site-functions/_kvfs
                grep -c "^complete -c 'kvfs'" $P/share/fish/vendor_completions.d/kvfs.fish | sed 's/^[1-9][0-9]*$/fish completes kvfs/'
                grep '^ExecStart=' $P/lib/systemd/system/kvfs@.service | sed "s|$P|P|"
                grep -E '^(Environment=KVFS_MOUNTPOINT|ExecStart)=' $P/lib/systemd/user/kvfs-store@.service | sed "s|$P|P|"
                mkdir units user-units
                ln -s $P/lib/systemd/system/kvfs@.service units/kvfs@srv-kv.service
                ln -s $P/lib/systemd/user/kvfs@.service user-units/kvfs@home-me-kv.service
                ln -s $P/lib/systemd/user/kvfs-store@.service user-units/kvfs-store@com.example.notes.service
                MANPATH=$P/share/man systemd-analyze verify units/kvfs@srv-kv.service && echo "system unit verified"
                MANPATH=$P/share/man systemd-analyze --user verify user-units/kvfs@home-me-kv.service && echo "user unit verified"
                MANPATH=$P/share/man systemd-analyze --user verify user-units/kvfs-store@com.example.notes.service && echo "store unit verified"
                MANPATH=$P/share/man systemd-analyze --user verify $P/lib/systemd/user/kvfs-sync.service && echo "sync unit verified"
                grep '^ExecStart=' $P/lib/systemd/user/kvfs-sync.service | sed "s|$P|P|"
                \#(Self.repository)/mount-scripts/uninstall.sh --prefix $P 2>/dev/null
                find $P -type f | wc -l
                kvfs get theme
                """#)
            #expect(output == """
                bin/kvfs
                lib/systemd/system/kvfs@.service
                lib/systemd/user/kvfs-store@.service
                lib/systemd/user/kvfs-sync.service
                lib/systemd/user/kvfs@.service
                share/bash-completion/completions/kvfs
                share/fish/vendor_completions.d/kvfs.fish
                share/man/man1/kvfs.1
                share/zsh/site-functions/_kvfs
                kvfs
                P/share/man/man1/kvfs.1
                man shows kvfs mount
                complete -o filenames -F F kvfs
                #compdef kvfs
                fish completes kvfs
                ExecStart=P/bin/kvfs mount %f --foreground $KVFS_OPTIONS
                Environment=KVFS_MOUNTPOINT=%h/kvfs-stores/%i
                ExecStart=P/bin/kvfs mount ${KVFS_MOUNTPOINT} --store %i --foreground $KVFS_OPTIONS
                system unit verified
                user unit verified
                store unit verified
                sync unit verified
                ExecStart=P/bin/kvfs sync
                0
                dark

                """)
        }
    }

    @Test("install.sh for a user (~/.local): user places ($XDG_CONFIG_HOME, $XDG_DATA_HOME), a note when ~/.local/bin is not on PATH; uninstall.sh removes it all")
    func userInstall() throws {
        try Self.requireGenerateManual()
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                export P=$HOME
                \#(Self.repository)/mount-scripts/install.sh --prefix $HOME/.local --bin-dir "$(dirname "$(command -v kvfs)")" 2>notes
                \#(Self.installedFiles)
                grep -c "note: $HOME/.local/bin is not on your PATH" notes
                \#(Self.repository)/mount-scripts/uninstall.sh --prefix $HOME/.local 2>/dev/null
                find $HOME -type f | wc -l
                """#)
            #expect(output == """
                .local/bin/kvfs
                .local/share/man/man1/kvfs.1
                .local/share/zsh/site-functions/_kvfs
                config/fish/completions/kvfs.fish
                config/systemd/user/kvfs-store@.service
                config/systemd/user/kvfs-sync.service
                config/systemd/user/kvfs@.service
                data/bash-completion/completions/kvfs
                1
                0

                """)
        }
    }

    @Test("mount-scripts/quickstart.sh in a fresh HOME: kvfs is on a new login shell's PATH and the default store is mounted at ~/kvfs; uninstall.sh takes back what it installed",
          .enabled(if: geteuid() == 0, "as root the quick start installs into /usr/local, which the test replaces by a tmpfs of its own"))
    func quickstart() throws {
        try Self.requireGenerateManual()
        let swift = try #require(ChildProcess.find("swift"), "the quick start needs swift on PATH")
        try withSandbox { sandbox in
            // A private /usr/local: what the quick start installs there goes with the namespace.
            let output = try sandbox.ok(#"""
                built=$(dirname "$(command -v kvfs)")
                mkdir fresh
                unshare -m --propagation private sh -c '
                    mount -t tmpfs kvfs-quickstart /usr/local || exit 1
                    as_user() { env -i HOME=$T/fresh LANG=C.UTF-8 PATH=/usr/bin:/bin:\#((swift as NSString).deletingLastPathComponent) "$@"; }
                    as_user \#(Self.repository)/mount-scripts/quickstart.sh --bin-dir "$0" > quickstart.out 2>&1 || { cat quickstart.out; exit 1; }
                    grep "^kvfs: the default store is mounted at" quickstart.out | sed "s|$T|T|"
                    as_user sh -l -c "command -v kvfs; echo dark > ~/kvfs/theme; kvfs get theme; kvfs unmount ~/kvfs"
                    as_user \#(Self.repository)/mount-scripts/uninstall.sh 2>/dev/null
                    find /usr/local -type f | wc -l' "$built"
                """#, timeout: 300)
            #expect(output == "kvfs: the default store is mounted at T/fresh/kvfs\n/usr/local/bin/kvfs\ndark\n0\n")
        }
    }

    @Test("an fstab line with x-systemd.automount and _netdev becomes systemd units (systemd-fstab-generator) that pass systemd-analyze verify")
    func fstabUnits() throws {
        try withSandbox { sandbox in
            let output = try sandbox.ok(#"""
                mkdir gen
                echo "$SYNC $M fuse.kvfs state_dir=$STATE,x-systemd.automount,_netdev,nofail 0 0" > fstab
                SYSTEMD_FSTAB=$T/fstab /lib/systemd/system-generators/systemd-fstab-generator gen gen gen
                unit=$(systemd-escape --path $M)
                grep -E '^(Type|What|Options)=' gen/$unit.mount | sed "s|$T|T|g"
                ls gen/remote-fs.target.wants
                systemd-analyze verify gen/$unit.mount gen/$unit.automount && echo verified
                """#)
            let unit = try sandbox.ok("systemd-escape --path $M").trimmingCharacters(in: .newlines)
            #expect(output == """
                What=T/sync
                Type=fuse.kvfs
                Options=state_dir=T/state,x-systemd.automount,_netdev,nofail
                \(unit).automount
                verified

                """)
        }
    }

    @Test("mount -t fuse.kvfs runs an installed kvfs although mount(8) gives its helper no PATH; the options fstab adds are accepted",
          .enabled(if: geteuid() == 0, "mount(8) and a private /usr/local/bin need root"))
    func mountFindsInstalledKvfs() throws {
        try withSandbox { sandbox in
            // A private mount namespace whose /usr/local/bin holds only this kvfs: where install.sh puts it as root.
            let output = try sandbox.ok(#"""
                unshare -m --propagation private sh -c '
                    mount -t tmpfs kvfs-bin /usr/local/bin && cp "$(command -v kvfs)" /usr/local/bin/kvfs &&
                    env -i /usr/bin/mount -t fuse.kvfs $SYNC $M -o state_dir=$STATE,device_name=fstab,_netdev,nofail,x-systemd.automount &&
                    echo hello > $M/k && cat $M/k && jq -r .device.name $M/.kvfs/status &&
                    env -i /usr/local/bin/kvfs unmount $M && echo unmounted'
                kvfs get k $S
                """#)
            #expect(output == "hello\nfstab\nunmounted\nhello\n")
        }
    }
}
