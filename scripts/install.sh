# Sourced by scripts/test and scripts/demo: install what is missing from
# Debian's packages (as root, or with sudo).
have() { command -v "$1" >/dev/null 2>&1; }
apt_updated=""
install() {
	if ! have apt-get; then
		echo "$0: $* missing and no apt-get to install it; install it and retry" >&2
		exit 1
	fi
	local sudo=""
	[[ $(id -u) == 0 ]] || sudo="sudo"
	if [[ -z $apt_updated ]]; then
		$sudo apt-get update -qq
		apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
# A real Chromium drives the agents (CHROME_PATH, when set, names another).
need_chromium() {
	if [[ -z ${CHROME_PATH:-} ]] && ! have chromium && ! have google-chrome && ! have chromium-browser; then
		install chromium fonts-liberation
	fi
}
