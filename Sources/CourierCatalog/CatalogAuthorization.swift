import CourierSpool
import CourierTokens
import CourierTransport

extension CatalogSync {
    /// With `oauth-*`: the sync's requests carry a client-credentials token,
    /// kept in `.courier/oauth-catalog-NAME.json` between syncs and fetched
    /// anew once after a 401. Each token is known to the session's ledger
    /// before it is sent, so an answer that echoes it is redacted.
    func bearer(options: CurlOptions) -> OAuthBearer? {
        guard let client = catalog.oauth else { return nil }
        let tokens = OAuthTokens(session: session, redactor: configuration.redactor, log: log)
        return OAuthBearer(tokens: tokens, owner: .catalog(catalog.name.value), client: client, options: options)
    }
}
