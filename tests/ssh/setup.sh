#!/usr/bin/env bash
# Installs what tests/ssh/run.sh needs beyond the rest of the suite: Debian's OpenSSH server (and
# its client, ssh-keygen) and iproute2 for the network namespace. Safe to run again.
set -euo pipefail

missing=()
for package in openssh-server openssh-client iproute2; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    # Another apt run may hold the lock for a while; wait for it rather than fail.
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    # The package's own service is not wanted: the test starts its own sshd on its own port.
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "$(/usr/sbin/sshd -V 2>&1 | head -1)"
