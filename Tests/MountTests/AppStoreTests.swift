import Foundation
import Testing

/// Issue 16 item 4: a Swift program's `.default` opens the app's own store,
/// named by `KVFS_STORE`, else the main bundle's identifier (an Info.plist
/// beside the executable), else the executable's name; a program never sees
/// another store's keys, quota or notifications. The programs are copies of
/// kvfs-store-probe (Tests/Programs/StoreProbe), each run as an app of its own.
@Suite("Each app its own store")
struct AppStoreTests {
    static let probe = MountEnvironment.productsDirectory.appendingPathComponent("kvfs-store-probe").path

    /// `apps/bundled/notes-app` with an Info.plist naming com.example.notes, and `apps/named/todo`.
    static let apps = #"""
        P=\#(probe)
        mkdir -p apps/bundled apps/named
        cp $P apps/bundled/notes-app && cp $P apps/named/todo
        cat > apps/bundled/Info.plist <<'PLIST'
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        	<key>CFBundleIdentifier</key>
        	<string>com.example.notes</string>
        </dict>
        </plist>
        PLIST

        """#

    @Test("the store's identifier: KVFS_STORE, else Bundle.main's (Info.plist beside the executable), else the executable's name")
    func identifierOrder() throws {
        try withSandbox(.plain) { sandbox in  // an app's own store; sealed, the library runs KVStoreTests' suites
            let output = try sandbox.ok(Self.apps + #"""
                KVFS_STORE=com.example.env $P identifier
                apps/bundled/notes-app identifier
                apps/named/todo identifier
                KVFS_STORE=com.example.env apps/bundled/notes-app identifier
                KVFS_STORE= apps/named/todo identifier
                ln -s ../bundled/notes-app apps/named/link-to-notes && apps/named/link-to-notes identifier
                KVFS_STORE=a/b $P identifier 2>&1 | grep -o "KVFS_STORE: 'a/b' is not a store identifier: '/' is not allowed"
                """#)
            #expect(output == """
                com.example.env
                com.example.notes
                todo
                com.example.env
                todo
                com.example.notes
                KVFS_STORE: 'a/b' is not a store identifier: '/' is not allowed

                """)
        }
    }

    @Test("two apps each write theme and fill their own 1 MB: neither sees the other's key, quota or notifications; another program of the same store does")
    func appsAreApart() throws {
        try withSandbox(.plain) { sandbox in  // an app's own store; sealed, the library runs KVStoreTests' suites
            let output = try sandbox.ok(Self.apps + #"""
                # todo watches its store while notes-app writes; a program of notes-app's store (another device of it) is the control.
                apps/named/todo set theme light watch 4 get theme usage > todo.out &
                KVFS_STORE=com.example.notes $P wait-for theme 30 get theme > control.out &
                sleep 1
                apps/bundled/notes-app set theme dark fill usage get theme
                wait
                KVFS_STORE=com.example.env $P set theme blue fill usage get theme
                echo -- todo; cat todo.out
                echo -- todo fills its own; apps/named/todo fill usage get theme
                echo -- control; grep -c '^notified 0 .*theme' control.out; grep -v '^notified' control.out
                echo -- stores; kvfs stores | cut -c1-32 | sed 's/ *$//'
                kvfs get theme --store com.example.notes; kvfs get theme --store todo; kvfs get theme --store com.example.env
                """#, timeout: 120)
            let refusal = "refused: value for 'one-more' would put the store 1 bytes over its 1048576-byte quota; remove or shrink other keys"
            #expect(output == """
                notified 2 one-more
                \(refusal)
                usage 2 keys 1048576 bytes
                dark
                notified 2 one-more
                \(refusal)
                usage 2 keys 1048576 bytes
                blue
                -- todo
                light
                usage 1 keys 6 bytes
                -- todo fills its own
                notified 2 one-more
                \(refusal)
                usage 2 keys 1048576 bytes
                light
                -- control
                1
                dark
                -- stores
                STORE              KEYS  BYTES
                com.example.env    2     1048576
                com.example.notes  2     1048576
                todo               2     1048576
                dark
                light
                blue

                """)
        }
    }
}
