// The testing product builds on the launcher's process supervision: a test that imports
// StateBusTesting gets `NodeProcess` and `WaitTimeout` too.
@_exported import StateBusLaunch
