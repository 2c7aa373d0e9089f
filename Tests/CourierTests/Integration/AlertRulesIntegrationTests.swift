import Foundation
import Testing

/// etc/prometheus/courier-alerts.yml, the alerts that ship: Prometheus
/// accepts them, and promtool's own unit tests show each one firing and
/// staying quiet.
@Suite(.tags(.integration)) struct AlertRulesTests {
    static let rules = Shell.repository + "/etc/prometheus/courier-alerts.yml"
    static let tests = Shell.repository + "/etc/prometheus/courier-alerts.test.yml"

    @Test("promtool accepts the alert rules, and their tests pass", .needs("promtool"))
    func promtoolTestsTheRules() throws {
        let check = try Shell.run(["promtool", "check", "rules", Self.rules])
        #expect(check.status == 0, "\(check.output)")
        let tested = try Shell.run(["promtool", "test", "rules", Self.tests])
        #expect(tested.status == 0 && tested.output.contains("SUCCESS"), "\(tested.output)")
    }

    @Test("every alert has a test where it fires and one where it stays quiet")
    func everyAlertIsTestedBothWays() throws {
        let rules = try String(contentsOfFile: Self.rules, encoding: .utf8)
        let alerts = rules.split(separator: "\n").compactMap { line -> String? in
            let text = line.trimmingCharacters(in: .whitespaces)
            return text.hasPrefix("- alert: ") ? String(text.dropFirst("- alert: ".count)) : nil
        }
        #expect(alerts.count >= 6, "\(alerts)")
        for wanted in [
            "CourierBacklogOld", "CourierNeedsAttentionGrowing", "CourierRoundsStale", "CourierRoundsFailing",
            "CourierNotifierDown", "CourierCatalogNotSynced",
        ] {
            #expect(alerts.contains(wanted), "courier-alerts.yml lacks \(wanted)")
        }
        // Each `alertname:` line is followed by its `exp_alerts:`: `[]`
        // for quiet, a list for firing.
        var fires: Set<String> = []
        var quiet: Set<String> = []
        var current: String?
        for line in try String(contentsOfFile: Self.tests, encoding: .utf8).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("alertname: ") { current = String(text.dropFirst("alertname: ".count)) }
            guard let name = current, text.hasPrefix("exp_alerts:") else { continue }
            if text == "exp_alerts: []" { quiet.insert(name) } else { fires.insert(name) }
            current = nil
        }
        for alert in alerts {
            #expect(fires.contains(alert), "no test shows \(alert) firing")
            #expect(quiet.contains(alert), "no test shows \(alert) staying quiet")
        }
    }
}
