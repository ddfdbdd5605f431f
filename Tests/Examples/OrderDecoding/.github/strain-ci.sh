#!/usr/bin/env bash
# Strain in this package's CI: the logic of each step of .github/workflows/strain.yml,
# one subcommand per step, so a step runs the same on a laptop as on a runner:
#
#   install       the system packages, and Strain from its release bundle ($STRAIN_BUNDLE_URL)
#   build base    the pull request's base commit ($BASE_SHA) in a worktree, its $STRAIN_PRODUCT
#                 copied aside; a base without that product (the first pull request) is noted
#   build head    this commit's $STRAIN_PRODUCT
#   gate          the interleaved gate, base against head; without a base build, a plain run
#                 (against the stored baseline for this runner kind when there is one)
#   baseline      on the main branch: record the baseline for this runner kind, calibrated
#
# It writes the pull-request comment to strain-reports/comment.md and every report under
# strain-reports/. Steps hand values on through $GITHUB_ENV and $GITHUB_PATH as the runner
# does (outside a runner both default to files under $RUNNER_TEMP). Environment, set by the
# workflow: STRAIN_PRODUCT (the executable that links StrainCLI), STRAIN_SUITE,
# STRAIN_REPETITIONS (default 10), STRAIN_CONFIGURATION (default release), STRAIN_BUNDLE_URL,
# STRAIN_BUNDLE_SHA256 (optional), STRAIN_RUNNER_KIND (optional; default DISTRO-VERSION-ARCH),
# STRAIN_SCRATCH_PATH (default .build, the folder the workflow caches).
# shellcheck disable=SC1091,SC2016  # /etc/os-release is the machine's; backticks in printf formats are Markdown
set -euo pipefail
# A failure inside $(…) fails the step too (bash does not pass -e into command substitutions by default).
shopt -s inherit_errexit

workspace=${GITHUB_WORKSPACE:-$PWD}
temp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}
reports=$workspace/strain-reports
baselines=$workspace/strain-baselines
configuration=${STRAIN_CONFIGURATION:-release}
scratch=${STRAIN_SCRATCH_PATH:-$workspace/.build}
repetitions=${STRAIN_REPETITIONS:-10}
GITHUB_ENV=${GITHUB_ENV:-$temp/strain-ci.env}
GITHUB_PATH=${GITHUB_PATH:-$temp/strain-ci.path}

fail() { echo "::error title=strain-ci::$*" >&2; exit 2; }
product() { echo "${STRAIN_PRODUCT:?set STRAIN_PRODUCT to the executable product that links StrainCLI (order-strain here)}"; }
suite() { echo "${STRAIN_SUITE:?set STRAIN_SUITE to the suite file the gate runs}"; }
# A value for the later steps, as the runner passes it (one line, KEY=VALUE).
export_value() { echo "$1=$2" >> "$GITHUB_ENV"; export "$1=$2"; }

# `swift build` of the product in one package folder; prints the built executable's path.
build_product() {
    local package=$1
    swift build --package-path "$package" --scratch-path "$scratch" -c "$configuration" --product "$(product)" >&2 || return 1
    echo "$(swift build --package-path "$package" --scratch-path "$scratch" -c "$configuration" --show-bin-path)/$(product)"
}

step_install() {
    # The packages building and running Strain need (the same line as Strain's .ci/setup-user:
    # libunwind-dev brings the runtime's libunwind8 and liblzma-dev's liblzma5), and curl for the
    # download; only what is missing, so a machine that has them all needs no root.
    local need=()
    pkg-config --exists libunwind 2> /dev/null || need+=(libunwind-dev)
    [ -e /usr/lib/x86_64-linux-gnu/libunwind-ptrace.so ] || need+=(libunwind-dev)
    pkg-config --exists liblzma 2> /dev/null || need+=(liblzma-dev)
    command -v pkg-config > /dev/null || need+=(pkg-config)
    command -v curl > /dev/null || need+=(curl ca-certificates)
    if [ ${#need[@]} -gt 0 ]; then
        local sudo_=""
        [ "$(id -u)" -eq 0 ] || sudo_=sudo
        $sudo_ apt-get update -qq
        mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
        DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}"
    fi

    # Strain itself: the release bundle (`bash .ci/bundle DIR` in Strain's repository writes
    # strain-VERSION-linux-x86_64.tar.gz), not a source build.
    [ -n "${STRAIN_BUNDLE_URL:-}" ] || fail "STRAIN_BUNDLE_URL is empty: set the repository variable STRAIN_BUNDLE_URL to the address of Strain's release bundle, strain-VERSION-linux-x86_64.tar.gz"
    local tarball=$temp/strain-bundle.tar.gz root=$temp/strain
    curl -fsSL --retry 3 -o "$tarball" "$STRAIN_BUNDLE_URL" || fail "could not download $STRAIN_BUNDLE_URL"
    if [ -n "${STRAIN_BUNDLE_SHA256:-}" ]; then
        echo "$STRAIN_BUNDLE_SHA256  $tarball" | sha256sum -c --quiet - || fail "$STRAIN_BUNDLE_URL does not have the SHA-256 in STRAIN_BUNDLE_SHA256"
    fi
    rm -rf "$root" && mkdir -p "$root"
    tar -xzf "$tarball" -C "$root" --strip-components=1
    [ -x "$root/bin/strain" ] || fail "$STRAIN_BUNDLE_URL holds no bin/strain: is it Strain's release bundle?"
    echo "$root/bin" >> "$GITHUB_PATH"
    echo "Installed $("$root/bin/strain" --version) from $STRAIN_BUNDLE_URL into $root"

    # The stored baseline's name: branch, runner kind and toolchain (Strain's convention,
    # BRANCH-RUNNER-swift-VERSION), so each kind of runner and each toolchain has its own.
    local kind=${STRAIN_RUNNER_KIND:-$(. /etc/os-release && echo "$ID-$VERSION_ID")-$(uname -m)}
    local swift_version
    swift_version=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -1)
    [ -n "$swift_version" ] || fail "swift --version printed no version"
    export_value STRAIN_BASELINE "main-$kind-swift-$swift_version"
    echo "Baseline for this runner kind and toolchain: $STRAIN_BASELINE"
}

step_build_base() {
    local base=${BASE_SHA:?set BASE_SHA to the pull request base commit}
    local tree=$temp/strain-base
    # checkout's fetch-depth: 0 brings the base commit; fetched here when it did not.
    git -C "$workspace" cat-file -e "$base^{commit}" 2> /dev/null || git -C "$workspace" fetch --no-tags --quiet origin "$base"
    git -C "$workspace" worktree remove --force "$tree" 2> /dev/null || rm -rf "$tree"
    git -C "$workspace" worktree add --detach --quiet "$tree" "$base"
    # A base from before the package had its strain (the pull request that adds it) has
    # nothing to build: the gate step then says so, and runs this commit alone.
    local products=""
    if [ -f "$tree/Package.swift" ]; then
        products=$(swift package --package-path "$tree" --scratch-path "$scratch" describe) || fail "swift package describe failed on the base commit ${base:0:12}"
    fi
    if ! echo "$products" | awk '/^Products:/ { p = 1; next } /^[^ ]/ { p = 0 } p' | grep -x "    Name: $(product)" > /dev/null; then
        echo "::notice title=Strain gate::the base commit ${base:0:12} has no $(product) product: nothing to gate against"
        export_value STRAIN_BASE_BINARY ""
        git -C "$workspace" worktree remove --force "$tree"
        return 0
    fi
    local built
    built=$(build_product "$tree") || fail "the base commit ${base:0:12} does not build $(product) (the log above says why)"
    mkdir -p "$temp/strain-base-bin"
    cp "$built" "$temp/strain-base-bin/$(product)"
    export_value STRAIN_BASE_BINARY "$temp/strain-base-bin/$(product)"
    git -C "$workspace" worktree remove --force "$tree"
    echo "Built the base commit ${base:0:12}: $STRAIN_BASE_BINARY"
}

step_build_head() {
    local built
    built=$(build_product "$workspace") || fail "this commit does not build $(product) (the log above says why)"
    mkdir -p "$temp/strain-head-bin"
    cp "$built" "$temp/strain-head-bin/$(product)"
    export_value STRAIN_HEAD_BINARY "$temp/strain-head-bin/$(product)"
    echo "Built $(git -C "$workspace" rev-parse --short=12 HEAD): $STRAIN_HEAD_BINARY ($("$STRAIN_HEAD_BINARY" --version))"
    # The gate's driver (the bundle) and the package's strain should be one version.
    local driver
    driver=$(strain --version)
    [ "$driver" = "$("$STRAIN_HEAD_BINARY" --version)" ] ||
        echo "::warning title=Strain versions::the bundle is $driver and $(product) links $("$STRAIN_HEAD_BINARY" --version): use the bundle of the version Package.swift depends on"
}

step_gate() {
    local head=${STRAIN_HEAD_BINARY:?run build head first} comment=$reports/comment.md status=0
    mkdir -p "$reports"
    rm -f "$comment"
    if [ -n "${STRAIN_BASE_BINARY:-}" ]; then
        # Both builds in this job, repetitions alternating: the drift of a shared runner cancels.
        strain gate --baseline-binary "$STRAIN_BASE_BINARY" --candidate-binary "$head" "$(suite)" \
            --repetitions "$repetitions" --format github text --out "$reports/gate" || status=$?
        if [ -f "$reports/gate/gate.md" ]; then
            cp "$reports/gate/gate.md" "$comment"
        else
            printf '<!-- strain-gate -->\n### Strain gate: %s — could not compare (exit %s)\n\nThe gate wrote no comparison; its output is in the job log and the `strain-reports` artifact.\n' "$(suite)" "$status" > "$comment"
        fi
        return "$status"
    fi

    # No base build: the pull request that adds the package's strain, or a base without it.
    "$head" run "$(suite)" --repetitions "$repetitions" --out "$reports/run" --github || status=$?
    if [ -f "$baselines/${STRAIN_BASELINE:-none}.json" ] && [ "$status" -eq 0 ]; then
        # The main branch's stored baseline for this runner kind, restored from the cache.
        strain gate "$reports/run" --baseline "$STRAIN_BASELINE" --baselines "$baselines" \
            --format github text --out "$reports/gate" || status=$?
        if [ -f "$reports/gate/gate.md" ]; then cp "$reports/gate/gate.md" "$comment"; fi
    fi
    if [ ! -f "$comment" ]; then
        local verdict="passed" base=""
        [ -z "${BASE_SHA:-}" ] || base=" \`${BASE_SHA:0:12}\`"
        [ "$status" -eq 0 ] || verdict="failed (the run exited $status: an outcome its suite does not expect)"
        {
            printf '<!-- strain-gate -->\n### Strain gate: %s — no baseline yet, %s\n\n' "$(suite)" "$verdict"
            printf 'The base commit%s has no `%s` product and no baseline `%s` is stored for this runner kind, so there is nothing to compare with: this pull request is not gated on regressions. ' \
                "$base" "$(product)" "${STRAIN_BASELINE:-}"
            printf 'Once it is merged, the job on the main branch records the baseline, and later pull requests run the interleaved gate against their base.\n\nThis commit'"'"'s run of `%s`:\n\n' "$(suite)"
            # The run's own summary, cut to stay under GitHub's 65,536-character comment limit.
            head -c 60000 "$reports/run/summary.md" 2> /dev/null || echo "(no summary.md: see the job log)"
        } > "$comment"
    fi
    return "$status"
}

step_baseline() {
    local head=${STRAIN_HEAD_BINARY:?run build head first} name=${STRAIN_BASELINE:?run install first}
    mkdir -p "$reports" "$baselines"
    rm -rf "$reports/baseline-run" "$reports/calibration-run"
    # The baseline run, then an A/A rerun of the same build that calibrates its δ per row.
    "$head" run "$(suite)" --repetitions "$repetitions" --out "$reports/baseline-run" --github
    strain baseline save "$reports/baseline-run" --name "$name" --baselines "$baselines" --force
    "$head" run "$(suite)" --repetitions "$repetitions" --out "$reports/calibration-run" --format json > /dev/null
    strain gate --calibrate "$reports/calibration-run/run.json" --baseline "$name" --baselines "$baselines"
    strain baseline list --baselines "$baselines"
}

case "${1:-} ${2:-}" in
    "install ") step_install ;;
    "build base") step_build_base ;;
    "build head") step_build_head ;;
    "gate ") step_gate ;;
    "baseline ") step_baseline ;;
    *) echo "usage: $0 install | build base | build head | gate | baseline" >&2; exit 2 ;;
esac
