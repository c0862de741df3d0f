#!/bin/sh
# A throwaway OpenSSH server on 127.0.0.1 for the SSH engine's tests.
#
#   sshd_fixture.sh start DIR [rsa] [debug] [ecdsa]   prints the port
#   sshd_fixture.sh stop DIR
#
# start generates, in DIR: host_key (the server's), other_host_key (a key
# the server does not have), user_ed25519 (authorized), stranger (not
# authorized), user_rsa with "rsa"; known_hosts and known_hosts_other
# naming [127.0.0.1]:PORT with each host key; authorized_keys; sshd_config;
# sshd.log.  sshd lives as long as the process that ran start (its parent,
# or SSHD_FIXTURE_OWNER, a pid): a watcher kills it once that process is
# gone, so a crashed test cannot leave it running, and no clock ends it
# while a slow test still uses it.  "rsa" also lets sshd accept ssh-rsa (SHA-1)
# signatures: libssh2 1.10 signs RSA user auth with nothing else, and
# OpenSSH 8.8+ refuses that by default.  "debug" raises sshd's LogLevel to DEBUG1, so the log
# shows global requests such as keepalives.  "ecdsa" gives sshd a second
# host key, host_key_ecdsa (its known_hosts line: known_hosts_ecdsa), as a
# stock sshd has several.  stop kills sshd by the pid recorded at start.
set -eu

usage='usage: sshd_fixture.sh start|stop DIR [rsa] [debug] [ecdsa]'
cmd=${1:?$usage}
dir=${2:?$usage}
shift 2
want_rsa=no
extra_config=''
log_level=VERBOSE
want_ecdsa=no
for opt in "$@"; do
	case $opt in
	rsa) want_rsa=yes; extra_config='PubkeyAcceptedAlgorithms +ssh-rsa' ;;
	debug) log_level=DEBUG1 ;;
	ecdsa) want_ecdsa=yes ;;
	*) echo "$usage" >&2; exit 64 ;;
	esac
done
sshd=/usr/sbin/sshd	# sshd re-executes itself: it needs an absolute path

keygen() {
	ssh-keygen -q -t "$1" -N '' -C "fixture-$2" -f "$dir/$2" </dev/null
}

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

write_config() {
	cat >"$dir/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $1
HostKey $dir/host_key
$ecdsa_config
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PidFile $dir/sshd.pid
LogLevel $log_level
MaxSessions 10
MaxStartups 50
$extra_config
CONF
}

known_hosts_line() {
	printf '[127.0.0.1]:%s %s\n' "$1" "$(cut -d' ' -f1,2 "$dir/$2.pub")"
}

# Kills sshd (pid $1) once the owner is gone; ends with sshd.  Run in
# the background; its fds go nowhere (exec: a redirection of the call
# would leave dash's saved copies open), so whoever reads start's stdout
# waits for no one else.
watch_owner() {
	exec </dev/null >/dev/null 2>&1
	while kill -0 "$owner" 2>/dev/null && kill -0 "$1" 2>/dev/null; do
		sleep 1
	done
	kill "$1" 2>/dev/null || true
}

# Starts sshd on a free port; true once it listens.
try_start() {
	port=$1
	write_config "$port"
	: >"$dir/sshd.log"
	"$sshd" -D -f "$dir/sshd_config" -E "$dir/sshd.log" \
	    </dev/null >/dev/null 2>&1 &
	echo $! >"$dir/fixture.pid"
	watch_owner $! &
	echo $! >"$dir/watcher.pid"
	# up to 30 s: a loaded machine may take seconds to start sshd
	i=0
	while [ $i -lt 600 ]; do
		grep -q 'Server listening' "$dir/sshd.log" && return 0
		kill -0 "$(cat "$dir/fixture.pid")" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

start() {
	owner=${SSHD_FIXTURE_OWNER:-$PPID}
	mkdir -p "$dir"
	[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
	keygen ed25519 host_key
	keygen ed25519 other_host_key
	ecdsa_config=''
	if [ $want_ecdsa = yes ]; then
		keygen ecdsa host_key_ecdsa
		ecdsa_config="HostKey $dir/host_key_ecdsa"
	fi
	keygen ed25519 user_ed25519
	keygen ed25519 stranger
	cp "$dir/user_ed25519.pub" "$dir/authorized_keys"
	if [ $want_rsa = yes ]; then
		keygen rsa user_rsa
		cat "$dir/user_rsa.pub" >>"$dir/authorized_keys"
	fi
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		if try_start "$port"; then
			known_hosts_line "$port" host_key >"$dir/known_hosts"
			known_hosts_line "$port" other_host_key \
			    >"$dir/known_hosts_other"
			[ $want_ecdsa = no ] || known_hosts_line "$port" \
			    host_key_ecdsa >"$dir/known_hosts_ecdsa"
			echo "$port"
			return 0
		fi
		stop
		echo "sshd_fixture: attempt $attempt on port $port failed" >&2
	done
	cat "$dir/sshd.log" >&2
	return 1
}

stop() {
	[ -f "$dir/fixture.pid" ] || return 0
	kill "$(cat "$dir/fixture.pid")" 2>/dev/null || true
	[ ! -f "$dir/watcher.pid" ] ||
	    kill "$(cat "$dir/watcher.pid")" 2>/dev/null || true
	rm -f "$dir/fixture.pid" "$dir/watcher.pid"
}

case $cmd in
start) start ;;
stop) stop ;;
*) echo "$usage" >&2; exit 64 ;;
esac
