import Glibc

/// A thread of a delivery pass's own (the commit thread, the reader of
/// dropped files), run with every signal blocked: signals are the loop's,
/// so a round's SIGTERM reaches the thread that decides what to do with it.
enum PassThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// The thread running `body`; nil when none can be made (the system's
    /// limit), and the pass does that work on its own thread.
    static func start(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let made = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let body = Unmanaged<Body>.fromOpaque(context).takeRetainedValue()
                var signals = sigset_t()
                sigfillset(&signals)
                pthread_sigmask(SIG_BLOCK, &signals, nil)
                body.run()
                return nil
            }, context)
        guard made == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
        return thread
    }
}
