/// What `statebus inspect` does, in one line: its help's abstract both in `statebus` (which
/// runs the inspector's executable) and in `statebus-inspect` itself.
package let inspectorAbstract =
    "Serve a live web page of a running host: every object's properties, editable, the connected views, live charts."
