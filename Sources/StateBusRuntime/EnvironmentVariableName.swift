/// The names of the environment variables through which a StateBus process learns its place
/// in a topology: the cross-process `environmentObject`.
///
/// The launcher sets them for every node it starts, the testing product does the same for
/// the nodes a test starts, and the `StateBus` environment and the command-line tool read
/// them. They are named here once so the writers and the readers cannot drift apart.
public enum EnvironmentVariableName {
    /// `STATEBUS_NODE`: the node's name in its launch file.
    public static let node = "STATEBUS_NODE"
    /// `STATEBUS_ROLE`: `host` or `view`.
    public static let role = "STATEBUS_ROLE"
    /// `STATEBUS_OBJECTS`: the objects a node serves (a host) or binds (a view), comma-separated.
    public static let objects = "STATEBUS_OBJECTS"
    /// `STATEBUS_OBJECT`: one object, for tools that bind a single object; it wins over the
    /// first of ``objects``.
    public static let object = "STATEBUS_OBJECT"
    /// `STATEBUS_CONTROL`: the host's control endpoint; for a host, the endpoint to bind.
    public static let control = "STATEBUS_CONTROL"
    /// `STATEBUS_UPSTREAM`: for a relay, the control endpoint of the host (or relay) it relays.
    public static let upstream = "STATEBUS_UPSTREAM"
    /// For a host of a high-availability group: etcd's client URLs, comma-separated
    /// (`statebus host --ha`'s default).
    public static let highAvailabilityEtcd = "STATEBUS_HA"
    /// For a host of a high-availability group: the group's name (`--ha-group`'s default).
    public static let highAvailabilityGroup = "STATEBUS_HA_GROUP"
    /// `STATEBUS_KEY_FILE`: the path of the node's CURVE secret key file (never the key
    /// itself: an environment is readable by the user's other processes and logged by
    /// tools).
    public static let keyFile = "STATEBUS_KEY_FILE"
    /// `STATEBUS_HOST_KEY_FILE`: for a view, the path of its host's public key file.
    public static let hostKeyFile = "STATEBUS_HOST_KEY_FILE"
    /// `STATEBUS_AUTHORIZED_KEYS_FILE`: for a host, the path of its authorized keys file.
    public static let authorizedKeysFile = "STATEBUS_AUTHORIZED_KEYS_FILE"
    /// `STATEBUS_TIMEOUT`: seconds the command-line tool waits for a host when `--timeout`
    /// is not given (10 without it). For scripts and tests on a slow or busy machine.
    public static let timeout = "STATEBUS_TIMEOUT"
    /// `STATEBUS_BIN_DIR`: where the testing product looks for built executables such as
    /// `statebus`, when they are not next to the test bundle.
    public static let binDirectory = "STATEBUS_BIN_DIR"
    /// `STATEBUS_PYTHON`: the Python interpreter that has the Python client
    /// (`clients/python`) installed, for the demo's Python view and the bench's Python rows
    /// when `--python` is not given (`python3` on the `PATH` without it).
    public static let python = "STATEBUS_PYTHON"
}
