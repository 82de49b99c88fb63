"""Which binaries a terminal skill may need and where they come from on Debian."""
from __future__ import annotations

# binary -> Debian package that provides it ("python3-stdlib" style notes for builtins).
DEBIAN_PROVIDES: dict[str, str] = {}
_TABLE = """
coreutils: ls cp mv rm mkdir rmdir cat head tail sort uniq cut tr wc tee touch chmod chown chgrp ln
  stat du df date env printf echo sha256sum sha1sum md5sum b2sum split csplit comm join paste nl
  od base64 basename dirname realpath readlink mktemp sleep timeout nproc id whoami install dd
  shred truncate seq yes fold fmt expand unexpand tac shuf numfmt sync chroot test true false
  sum cksum factor pr ptx tsort users groups uname hostid logname nohup nice stdbuf
findutils: find xargs locate
grep: grep egrep fgrep
sed: sed
gawk: awk gawk
diffutils: diff cmp diff3 sdiff
patch: patch
tar: tar
gzip: gzip gunzip zcat zgrep
bzip2: bzip2 bunzip2 bzcat
xz-utils: xz unxz xzcat lzma
zstd: zstd unzstd zstdcat
zip: zip zipinfo
unzip: unzip
p7zip-full: 7z 7za
lz4: lz4
pigz: pigz
cpio: cpio
file: file
rsync: rsync
tree: tree
jq: jq
yq: yq
sqlite3: sqlite3
postgresql-client: psql pg_dump pg_restore createdb
mariadb-client: mysql mysqldump
git: git
make: make
cmake: cmake
gcc: gcc cc
g++: g++ c++
clang: clang
gdb: gdb
valgrind: valgrind
strace: strace
ltrace: ltrace
binutils: objdump nm readelf strip ld ar
python3: python3 python
python3-pip: pip pip3
python3-venv: venv
python3-pytest: pytest
nodejs: node nodejs
golang-go: go gofmt
protobuf-compiler: protoc
go/github.com/golangci/golangci-lint: golangci-lint
npm: npm npx
curl: curl
wget: wget
dnsutils: dig nslookup host
iproute2: ip ss tc
net-tools: netstat ifconfig route
iputils-ping: ping
netcat-openbsd: nc netcat
socat: socat
openssl: openssl
openssh-client: ssh ssh-keygen scp sftp ssh-keyscan ssh-add ssh-agent ssh-copy-id
gnupg: gpg gpg2
gpgv: gpgv
anacron: anacron
libcap2-bin: setcap getcap capsh
openssh-server: sshd
systemd-coredump: coredumpctl
pgloader: pgloader
libimage-exiftool-perl: exiftool
acl: setfacl getfacl
attr: setfattr getfattr
passwd: useradd userdel usermod groupadd groupdel passwd chage gpasswd
login: su newgrp
adduser: adduser deluser addgroup
sudo: sudo visudo
procps: ps top free uptime kill pkill pgrep watch sysctl vmstat pmap w
psmisc: killall fuser pstree
util-linux: mount umount lsblk findmnt flock logger column rename hexdump more script renice
  fallocate blkid losetup wipefs dmesg mkswap swapon swapoff lscpu setsid ionice
systemd: systemctl journalctl timedatectl hostnamectl loginctl systemd-analyze systemd-run
cron: crontab cron
at: at atq atrm batch
inotify-tools: inotifywait inotifywatch
logrotate: logrotate
bc: bc
dc: dc
gnuplot: gnuplot
lsof: lsof
htop: htop
tmux: tmux
screen: screen
less: less
vim: vim vi
nano: nano
bash: bash sh
dash: dash
zsh: zsh
shellcheck: shellcheck
apt: apt apt-get apt-cache apt-mark
dpkg: dpkg dpkg-query
pipx: pipx
python3-virtualenv: virtualenv
python3-poetry: poetry
csvkit: csvcut csvstat csvsql csvlook in2csv csvgrep csvjson
miller: mlr
xmlstarlet: xmlstarlet
libxml2-utils: xmllint
pandoc: pandoc
imagemagick: convert identify
ffmpeg: ffmpeg ffprobe
parallel: parallel
pv: pv
moreutils: sponge ts chronic ifne vidir
entr: entr
hyperfine: hyperfine
libc-bin: iconv getent ldd locale
pypi/duckdb-cli: duckdb
ripgrep: rg
fd-find: fdfind fd
bat: batcat
tcpdump: tcpdump
nmap: nmap
whois: whois
traceroute: traceroute
mtr-tiny: mtr
ufw: ufw
iptables: iptables
auditd: auditctl ausearch
sysstat: iostat sar mpstat pidstat
e2fsprogs: mkfs.ext4 e2fsck tune2fs chattr lsattr
quota: quota edquota
age: age
pwgen: pwgen
whois-mkpasswd: mkpasswd
apache2-utils: htpasswd ab
nginx: nginx
"""
for _line in _TABLE.replace("\n  ", " ").strip().splitlines():
    _pkg, _bins = _line.split(":", 1)
    for _b in _bins.split():
        DEBIAN_PROVIDES.setdefault(_b, _pkg.strip())

KNOWN_BINS = frozenset(DEBIAN_PROVIDES)


def provider(binary: str) -> str | None:
    return DEBIAN_PROVIDES.get(binary)
