import KVStore

/// What `.kvfs/history/` keeps between requests: its inodes and the keys'
/// listings last made. It lives inside ``KeyFileSystem``'s second `Mutex`,
/// never taken with the file tables' one; it asks the store for listings, so
/// the store's lock is taken inside it.
struct HistoryTables {
    /// How long a key's listing is reused while nothing in the store changed:
    /// the retention's age limit moves with the clock.
    static let listingLifetime: Duration = .seconds(1)
    /// The most keys' listings kept at once.
    static let listingsKept = 8

    /// A key's versions as listed, with where each name is: `ls -l` of 10,000
    /// versions looks each one up, and one listing serves all of them.
    struct Listing {
        let revision: HistoryRevision
        let made: ContinuousClock.Instant
        let versions: [KeyVersion]
        let indexByName: [String: Int]

        func version(named name: String) -> KeyVersion? { indexByName[name].map { versions[$0] } }
    }

    let store: DeviceStore
    var nodes = HistoryNodes()
    private var listings: [StoreKey: Listing] = [:]

    init(store: DeviceStore) {
        self.store = store
    }

    /// `key`'s versions, from the kept listing while it holds.
    mutating func listing(of key: StoreKey) -> Listing {
        let revision = store.historyRevision
        let now = ContinuousClock.now
        if let kept = listings[key], kept.revision == revision, now - kept.made < Self.listingLifetime { return kept }
        let versions = store.history(forKey: key, withDelivery: false)
        let listing = Listing(revision: revision, made: now, versions: versions,
                              indexByName: Dictionary(versions.indices.map { (versions[$0].name, $0) }, uniquingKeysWith: { first, _ in first }))
        if listings.count >= Self.listingsKept { listings.removeAll() }
        listings[key] = listing
        return listing
    }
}
