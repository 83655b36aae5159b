#!/usr/bin/env bash
# npm test's first step (pretest): what the tests need that a clone does not
# bring. The devDependencies (playwright-core, typescript, @types/node) when
# node_modules lacks one, and, as root, Debian's Chromium for the browser tests
# (.ci/run installs it too, with the rest CI needs). No browser is downloaded:
# playwright-core drives Debian's.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=$(node -e '
  const { devDependencies } = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
  console.log(Object.keys(devDependencies).filter((name) => !require("fs").existsSync(`node_modules/${name}/package.json`)).join(" "));')
if [ -n "$missing" ]; then
  echo "dev-deps: installing the devDependencies ($missing missing)" >&2
  export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "dev-deps: installing Debian's chromium for the browser tests" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
  else
    echo "dev-deps: the browser tests need Debian's chromium: sudo apt-get install -y chromium" >&2
  fi
fi
