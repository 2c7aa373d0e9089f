import CourierConfig

extension Catalog {
    /// The cursor a sync keeps: `since` as configured; without one, the
    /// version for a catalog whose state already holds one (synced before
    /// `server-time` became the default, against a server that may send no
    /// `server_time`), and the server's time for every other.
    package func cursor(resuming state: CatalogState) -> CatalogCursor {
        if let configuredCursor { return configuredCursor }
        if case .version? = state.since ?? state.syncing { return .version }
        return .serverTime
    }
}

extension CatalogState {
    /// The same position, with no sync in progress.
    func settingAsideSyncInProgress() -> CatalogState {
        var state = self
        state.syncing = nil
        state.cursor = nil
        state.complete = false
        state.fullStartedAt = nil
        return state
    }
}
