#!/usr/bin/env bash
# The checks CI runs besides the tests (deploy/test.sh). Run it before you push, too:
#
#   deploy/check.sh            format, strict build, release build, ThreadSanitizer unit tests
#   deploy/check.sh --ci       format, strict build (CI runs deploy/tsan.sh on its own)
#   deploy/check.sh --quick    format and strict build only (the same as --ci)
#
# - format: `swift format lint --strict` with the repository's .swift-format (fix with
#   `swift format format --in-place -r Package.swift Sources Tests`); generated code is skipped;
# - layers: the StateBus module's folders are layers (Docs.docc/Architecture.md); no file
#   names a type declared in a folder above its own (deploy/check-layers.py);
# - strict build: every warning is an error in StateBus's own targets (STATEBUS_STRICT=1, see
#   Package.swift), and every module a target imports must be declared in Package.swift;
# - release build: what `statebus bench` and users run. Not in CI: a second full build, and
#   a release-only compile error is rare; run the full check before you push;
# - ThreadSanitizer: the in-process unit tests (deploy/tsan.sh, also in CI).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=no
ci=no
for arg in "$@"; do
  case "$arg" in
    --quick) quick=yes ;;
    --ci) ci=yes ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

deploy/setup.sh >/dev/null
export STATEBUS_STRICT=1

step() { printf '\ncheck: %s\n' "$*"; }
# SwiftPM warns about pkg-config flags it ignores; nothing to act on.
quiet() { grep -v 'prohibited flag(s)' || true; }

step "format (swift format lint --strict)"
git ls-files -z -- 'Package.swift' 'Sources/*.swift' 'Tests/*.swift' | grep -zv '/Generated/' \
  | xargs -0 swift format lint --strict --configuration .swift-format

step "every import declared in Package.swift"
python3 deploy/check-imports.py

step "layers: no StateBus folder names a type of a folder above it"
python3 deploy/check-layers.py

step "strict build: warnings are errors, every import declared"
swift build --build-tests --explicit-target-dependency-import-check error 2>&1 | quiet

[ "$quick" = yes ] && { echo "check: quick checks passed"; exit 0; }
[ "$ci" = yes ] && { echo "check: CI checks passed"; exit 0; }

step "release build"
swift build -c release 2>&1 | quiet

step "ThreadSanitizer: unit tests (deploy/tsan.sh)"
deploy/tsan.sh

echo "check: all checks passed"
