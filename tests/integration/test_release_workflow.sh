#!/usr/bin/env bash
# The release workflow (.github/workflows/release.yml), no cluster needed: actionlint, built from its Go
# module at the version scripts/versions.sh pins, finds nothing wrong with any workflow; a workflow with
# a planted mistake is caught, so a silent actionlint cannot pass; and the release workflow stays a thin
# shell around `make release`, the target this machine runs and tests.
source "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d); on_exit "rm -rf '$TMP'"
WF=$ZK_ROOT/.github/workflows/release.yml

dir=$("$ZK_ROOT/scripts/upstream.sh" bin actionlint 2>"$TMP/build.log") ||
  skip_suite "actionlint cannot be built from its Go module: $(tail -1 "$TMP/build.log")"
AL=$dir/actionlint
. "$ZK_ROOT/scripts/versions.sh"
check "actionlint is the pinned $actionlint_version" bash -c "'$AL' -version | head -1 | grep -qx 'v\\?$actionlint_version'"

check "actionlint passes every workflow" bash -c \
  "cd '$ZK_ROOT' && '$AL' -no-color .github/workflows/*.yml >'$TMP/lint.out' 2>&1 || { cat '$TMP/lint.out'; exit 1; }"

# A step that reads an output nobody sets, in a copy: actionlint must name it.
mkdir -p "$TMP/repo/.github/workflows"
sed 's/\${{ env.DIST }}\/SHA256SUMS$/${{ steps.nothing.outputs.sums }}/' "$WF" >"$TMP/repo/.github/workflows/release.yml"
check "a planted mistake is caught" bash -c \
  "cd '$TMP/repo' && ! '$AL' -no-color .github/workflows/release.yml >'$TMP/bad.out' 2>&1 && grep -q 'property \"nothing\" is not defined' '$TMP/bad.out'"

check "it runs on v* tags only" bash -c "grep -A3 '^on:' '$WF' | grep -q 'tags: \\[\"v\\*\"\\]'"
# builds: the commands in the workflow that build something; the one allowed is `make release`.
builds() { grep -E '^[[:space:]]*(run:[[:space:]]*)?(make|buildah|scripts/(release|images)\.sh)([[:space:]]|$)' "$WF"; }
only_make_release() { [ "$(builds)" = '          make release VERSION="$version"' ]; }
check "it builds with make release and nothing else" only_make_release
check "it pushes what make release wrote, keeping the digests" grep -q 'skopeo copy --all --preserve-digests' "$WF"
check "it signs keyless (id-token), images and chart" \
  bash -c "grep -q 'id-token: write' '$WF' && [ \"\$(grep -c 'cosign sign ' '$WF')\" -ge 2 ]"
finish
