# apt_install WHO PACKAGE...: installs Debian packages (sourced by build.sh
# and scripts/dev-deps.sh). As root: apt-get install, with an apt-get update
# first only when that fails; otherwise the apt-get line to run is printed
# and it returns 1 (the caller decides whether that stops it).
apt_install() {
  local who="$1"
  shift
  if [ "$(id -u)" = 0 ]; then
    echo "$who: installing $*" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "$@" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$@" >/dev/null; }
  else
    echo "$who: missing Debian packages; run: sudo apt-get install -y $*" >&2
    return 1
  fi
}
