import ArgumentParser

/// `--json`, shared by the commands that print what a host holds (`get`, `set`, `dump`,
/// `watch`, `objects`): text for people by default, one JSON object per line for scripts.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false
}
