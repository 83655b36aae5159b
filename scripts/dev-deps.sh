#!/usr/bin/env bash
# npm test's first step (pretest): what the tests need that a clone does not
# bring. The devDependencies (playwright-core, typescript, @types/node, ...)
# when node_modules lacks one, and, as root, the Debian packages the tests run
# (TEST_PACKAGES; otherwise the apt-get line that installs them is printed).
# build.sh installs what the builds need the same way (scripts/apt-install.sh). No browser is
# downloaded: playwright-core drives Debian's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt-install.sh
missing=$(node -e '
  const { devDependencies } = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
  console.log(Object.keys(devDependencies).filter((name) => !require("fs").existsSync(`node_modules/${name}/package.json`)).join(" "));')
if [ -n "$missing" ]; then
  echo "dev-deps: installing the devDependencies ($missing missing)" >&2
  export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi
# Debian packages the tests run: Chromium (the browser tests), PyTorch and
# matplotlib (models/compare_styles.py's test, and PyTorch for
# tests/checkpoint.test.js; the engine tests need no torch), PyYAML
# (models/convert_marian.py reads Marian's model.yml with it), zstd
# (tests/zstd.test.js compresses a 17 MB file with the real tool).
TEST_PACKAGES="chromium python3-torch libopenblas0-pthread python3-matplotlib python3-yaml zstd"
missing_packages=""
for p in $TEST_PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing_packages="$missing_packages $p"; done
# shellcheck disable=SC2086 # a list of words
if [ -n "$missing_packages" ]; then apt_install dev-deps $missing_packages || true; fi
