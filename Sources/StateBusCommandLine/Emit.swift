import Foundation

/// Writes a line straight to standard output (file descriptor 1, unbuffered), so a pipe (a
/// launcher, a test) sees it at once. Not `print` + `fflush(nil)`: flushing every stream
/// takes stdin's lock, which a `readLine()` blocked on a terminal holds: a deadlock.
package func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
